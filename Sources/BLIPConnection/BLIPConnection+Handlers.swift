import BLIPCodec

extension BLIPConnection {
    enum RegisteredHandler: Sendable {
        case concurrent(BLIPRequestHandler)
        case ordered(BLIPOrderedRequestHandler, ArrivalLine)
    }

    /// Registers the handler for requests whose `Profile` is `profile`, replacing any earlier one.
    ///
    /// Requests without a handler get the error reply `BLIP/404` (spec §2.10).
    public func setHandler(for profile: String, _ handler: @escaping BLIPRequestHandler) {
        handlers.withLockedValue { $0[profile] = .concurrent(handler) }
    }

    /// Registers a handler that is given each request's turn in the order the requests of `profile` arrived,
    /// replacing any earlier handler.
    public func setHandler(for profile: String, inArrivalOrder handler: @escaping BLIPOrderedRequestHandler) {
        handlers.withLockedValue { $0[profile] = .ordered(handler, ArrivalLine()) }
    }

    package func removeHandler(for profile: String) {
        handlers.withLockedValue { $0[profile] = nil }
    }

    /// Starts the handler of `request` in a task of `group`, beside the handlers still running. Called in arrival
    /// order, which is where ordered profiles' turns are issued.
    nonisolated func dispatch(_ request: BLIPMessage, into group: inout DiscardingTaskGroup) {
        switch request.profile.flatMap({ profile in handlers.withLockedValue { $0[profile] } }) {
        case .concurrent(let handler):
            group.addTask { await self.handle(request) { try await handler(request) } }
        case .ordered(let handler, let line):
            let turn = line.issue()
            group.addTask {
                await self.handle(request) { try await handler(request, turn) }
                turn.end()
            }
        case nil:
            group.addTask { await self.handle(request, with: nil) }
        }
    }

    private nonisolated func handle(_ request: BLIPMessage, with handler: (() async throws -> BLIPMessage)?) async {
        let reply: BLIPMessage
        if let handler {
            do {
                var answer = try await handler()
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
