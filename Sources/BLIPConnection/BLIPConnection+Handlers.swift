import BLIPCodec

extension BLIPConnection {
    /// Registers the handler for requests whose `Profile` is `profile`, replacing any earlier one.
    ///
    /// Requests without a handler get the error reply `BLIP/404` (spec §2.10).
    public func setHandler(for profile: String, _ handler: @escaping BLIPRequestHandler) {
        handlers.withLockedValue { $0[profile] = handler }
    }

    package func removeHandler(for profile: String) {
        handlers.withLockedValue { $0[profile] = nil }
    }

    private nonisolated func handler(for request: BLIPMessage) -> BLIPRequestHandler? {
        guard let profile = request.profile else { return nil }
        return handlers.withLockedValue { $0[profile] }
    }

    /// Runs a handler per incoming request, concurrently, until the connection ends.
    nonisolated func dispatchRequests(_ requests: AsyncStream<BLIPMessage>) async {
        await withDiscardingTaskGroup { group in
            for await request in requests {
                group.addTask { await self.handle(request) }
            }
            group.cancelAll()
        }
    }

    private nonisolated func handle(_ request: BLIPMessage) async {
        let reply: BLIPMessage
        if let handler = handler(for: request) {
            do {
                var answer = try await handler(request)
                answer.number = request.number
                if answer.kind == .request {
                    answer.kind = .reply
                }
                reply = answer
            } catch let error as BLIPErrorReply {
                reply = request.errorReply(error)
            } catch {
                logger.warning(
                    "BLIP handler threw",
                    metadata: ["blip.profile": "\(request.profile ?? "")", "blip.error": "\(error)"]
                )
                reply = request.errorReply(
                    BLIPErrorReply(domain: "BLIP", code: 501, message: "handler failed"))
            }
        } else {
            logger.debug(
                "no handler for BLIP request", metadata: ["blip.profile": "\(request.profile ?? "")"])
            reply = request.errorReply(.noHandler)
        }
        guard !request.isNoReply else { return }
        post(reply)
    }

    /// Queues a handler's reply without a hop onto this actor: replies that finish together (a group
    /// commit answers hundreds of `rev`s at once) reach the actor in one turn instead of one hop each.
    private nonisolated func post(_ reply: BLIPMessage) {
        if postedReplies.post(reply) {
            Task { await self.sendPostedReplies() }
        }
    }

    private func sendPostedReplies() {
        for reply in postedReplies.takeAll() {
            sendReply(reply)
        }
    }
}
