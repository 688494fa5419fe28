import Foundation
import UpstreamDialer

extension TestGateway {
    /// A dialer for `/<database>/_blipsync` on the test listener, offering `subprotocols` like Couchbase Lite.
    package static func dialer(
        port: Int, database: String = TestGateway.databaseName,
        subprotocols: [String] = ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"],
        credentials: (user: String, password: String)? = nil, heartbeat: Duration? = nil, userAgent: String? = nil
    ) throws -> UpstreamDialer {
        var headers: [(name: String, value: String)] = []
        if let userAgent {
            headers.append((name: "User-Agent", value: userAgent))
        }
        if let credentials {
            let token = Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            headers.append((name: "Authorization", value: "Basic \(token)"))
        }
        return UpstreamDialer(
            target: try UpstreamTarget(url: "ws://127.0.0.1:\(port)/\(database)/_blipsync"),
            options: .init(subprotocols: subprotocols, headers: headers, heartbeat: heartbeat),
            logger: testLogger)
    }
}
