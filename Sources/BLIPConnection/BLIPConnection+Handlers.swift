import BLIPCodec

extension BLIPConnection {
    enum RegisteredHandler: Sendable {
        case concurrent(BLIPRequestHandler)
        case ordered(BLIPOrderedRequestHandler, ArrivalLine)
        case deferring(BLIPDeferringRequestHandler, ArrivalLine)
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

    /// Registers a handler that is given each request's turn, as `setHandler(for:inArrivalOrder:)` does, and that
    /// may answer after it has returned, through the request's `BLIPPendingReply`; replacing any earlier handler.
    /// A handler that throws before answering gets the error reply it would get from the other kinds.
    public func setHandler(for profile: String, deferringReplies handler: @escaping BLIPDeferringRequestHandler) {
        handlers.withLockedValue { $0[profile] = .deferring(handler, ArrivalLine()) }
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
        case .deferring(let handler, let line):
            let turn = line.issue()
            group.addTask {
                let pending = BLIPPendingReply(to: request, on: self)
                do {
                    try await handler(request, turn, pending)
                } catch {
                    pending.fail(error)
                }
                turn.end()
            }
        case nil:
            logger.debug(
                "no handler for BLIP request", metadata: ["blip.profile": "\(request.profile ?? "")"])
            answer(request, with: .success(request.errorReply(.noHandler)))
        }
    }

    private nonisolated func handle(_ request: BLIPMessage, with handler: () async throws -> BLIPMessage) async {
        do {
            answer(request, with: .success(try await handler()))
        } catch {
            answer(request, with: .failure(error))
        }
    }

    /// Sends the reply to `request` that its handler's outcome makes: the handler's reply numbered as the answer,
    /// or the error reply for what it threw. Nothing for a request that asked for no reply.
    nonisolated func answer(_ request: BLIPMessage, with outcome: Result<BLIPMessage, any Error>) {
        guard !request.isNoReply else { return }
        let reply: BLIPMessage
        switch outcome {
        case .success(var answer):
            answer.number = request.number
            if answer.kind == .request {
                answer.kind = .reply
            }
            reply = answer
        case .failure(let error as BLIPErrorReply):
            reply = request.errorReply(error)
        case .failure(let error):
            logger.warning(
                "BLIP handler threw",
                metadata: ["blip.profile": "\(request.profile ?? "")", "blip.error": "\(error)"]
            )
            reply = request.errorReply(BLIPErrorReply(domain: "BLIP", code: 501, message: "handler failed"))
        }
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
