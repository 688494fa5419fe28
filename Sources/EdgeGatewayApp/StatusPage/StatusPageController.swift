import EdgeConfig
import EdgeIdentity
import Hummingbird
import SyncListener

/// The status page at `/` on the ops endpoint, for the people at the site: the node, its health, who is
/// connected, the upstreams and the pairing codes. Plain HTML and CSS that read completely on their own, plus
/// a small script that replaces the live part with `/status-page/live` every few seconds.
///
/// Like /health it is unauthenticated and on the ops address, and carries no secret and no document.
struct StatusPageController: Sendable {
    let monitor: HealthMonitor
    /// Nil when the data directory could not be read.
    let nodeID: NodeID?
    let listeners: [SyncListener]
    let upstreams: [UpstreamService]
    let pairing: PairingService?

    static let livePath = "/status-page/live"
    static let stylesheetPath = "/status-page/style.css"
    static let scriptPath = "/status-page/script.js"

    /// Everything the page loads comes from the ops endpoint itself; nothing may be framed, posted or embedded
    /// from elsewhere, so that even a value that slipped through escaping could not run or phone home.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("/") { _, _ in
            let page = await snapshot().pageHTML(
                liveSource: Self.livePath, stylesheet: Self.stylesheetPath, script: Self.scriptPath)
            return Self.response(page, contentType: "text/html; charset=utf-8")
        }
        router.get(RouterPath(Self.livePath)) { _, _ in
            Self.response(await snapshot().liveHTML, contentType: "text/html; charset=utf-8")
        }
        router.get(RouterPath(Self.stylesheetPath)) { _, _ in
            Self.response(StatusPageAssets.stylesheet, contentType: "text/css; charset=utf-8")
        }
        router.get(RouterPath(Self.scriptPath)) { _, _ in
            Self.response(StatusPageAssets.script, contentType: "text/javascript; charset=utf-8")
        }
    }

    private func snapshot() async -> StatusPageSnapshot {
        await StatusPageSnapshot.take(
            monitor: monitor, nodeID: nodeID, listeners: listeners, upstreams: upstreams, pairing: pairing)
    }

    private static func response(_ text: String, contentType: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: contentType,
                .cacheControl: "no-store",
                .contentSecurityPolicy: contentSecurityPolicy,
                .xContentTypeOptions: "nosniff",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}
