import BLIPCodec

extension BLIPConnection {
    /// Sends a request and waits for its reply; an error reply is thrown as `BLIPErrorReply`.
    ///
    /// Waits first while `configuration.maxQueuedBytes` of outgoing data are queued, so a peer that reads
    /// slowly or never ACKs slows callers down instead of growing memory.
    public func sendRequest(_ request: BLIPMessage) async throws -> BLIPMessage {
        let number = try await enqueueRequest(request)
        return try await awaitReply(to: number)
    }

    /// As `sendRequest`, calling `numbered` once the request has its number and its place in the queue, before the
    /// reply: a caller whose requests must reach the peer in a set order can go on with the next one then.
    package func sendRequest(_ request: BLIPMessage, numbered: @Sendable () -> Void) async throws -> BLIPMessage {
        let number = try await enqueueRequest(request)
        numbered()
        return try await awaitReply(to: number)
    }

    /// Sends a request whose body comes from `body`, chunk by chunk, and waits for its reply.
    ///
    /// The body is framed as it arrives and never held whole: each chunk waits for queue space like any
    /// request, so a body of any length streams at the pace the peer ACKs. If `body` throws, the peer would
    /// otherwise see a truncated message it cannot tell from a complete one, so the connection closes with
    /// 1011 and the error is rethrown.
    public func sendRequest<Body: AsyncSequence & Sendable>(
        _ request: BLIPMessage,
        streamingBody body: Body
    ) async throws -> BLIPMessage where Body.Element == [UInt8] {
        let number = try await enqueueRequest(request, streamingBody: true)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.pump(body, intoRequest: number) }
            let reply = try await awaitReply(to: number)
            try await group.waitForAll()
            return reply
        }
    }

    private func pump<Body: AsyncSequence>(_ body: Body, intoRequest number: UInt64) async throws
    where Body.Element == [UInt8] {
        do {
            for try await chunk in body {
                try await waitForQueueSpace()
                outbox.appendBody(chunk, toRequest: number)
                wakeWriter()
            }
        } catch {
            if acceptsMessages {
                logger.error("streamed body failed; closing", metadata: ["blip.error": "\(error)"])
                close(.internalError, reason: "request body failed")
            }
            throw error
        }
        outbox.finishBody(ofRequest: number)
        wakeWriter()
    }

    /// Queues `request` as one that expects a reply, once there is queue space; returns its number. The caller
    /// registers its wait for the reply before its next suspension, so that no reply arrives unclaimed.
    func enqueueRequest(_ request: BLIPMessage, streamingBody: Bool = false) async throws -> UInt64 {
        var request = request
        request.kind = .request
        request.isNoReply = false
        try await waitForQueueSpace()
        let number = try enqueue(request, streamingBody: streamingBody)
        assembler.expectReply(to: number)
        return number
    }

    /// Waits for the reply to request `number`; registered before any suspension so that no reply is missed.
    private func awaitReply(to number: UInt64) async throws -> BLIPMessage {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    pendingReplies[number] = .request(continuation)
                }
            }
        } onCancel: {
            Task { await self.abandonReply(to: number) }
        }
    }

    /// Sends a request that the peer must not answer; returns once it is queued.
    package func sendNoReply(_ request: BLIPMessage) async throws {
        var request = request
        request.kind = .request
        request.isNoReply = true
        try await waitForQueueSpace()
        _ = try enqueue(request)
    }

    /// Queues a reply to one of the peer's requests.
    ///
    /// Replies skip the queue-space wait: a handler blocked on it could deadlock against an outgoing
    /// message that is itself waiting for the peer's ACK.
    func sendReply(_ reply: BLIPMessage) {
        guard case .running = state else { return }
        do {
            _ = try enqueue(reply)
        } catch {
            logger.error(
                "cannot encode reply, sending an error instead", metadata: ["blip.error": "\(error)"])
            let request = BLIPMessage(kind: .request, number: reply.number, isUrgent: reply.isUrgent)
            _ = try? enqueue(
                request.errorReply(
                    BLIPErrorReply(domain: "BLIP", code: 500, message: "reply could not be encoded")))
        }
    }

    /// Messages queued before `run` starts go out once it does.
    private var acceptsMessages: Bool {
        switch state {
        case .idle, .running: true
        case .closing, .closed: false
        }
    }

    private func enqueue(_ message: BLIPMessage, streamingBody: Bool = false) throws -> UInt64 {
        guard acceptsMessages else {
            throw closeReasonForSending
        }
        do {
            let number = try outbox.enqueue(message, streamingBody: streamingBody)
            wakeWriter()
            return number
        } catch {
            throw BLIPConnectionError.encodingFailed(error)
        }
    }

    private var closeReasonForSending: BLIPConnectionError {
        switch state {
        case .closing(let code, _): .closedLocally(code)
        case .closed(let reason): reason
        case .idle, .running: .closedByPeer
        }
    }

    private func waitForQueueSpace() async throws {
        while outbox.pendingBytes >= configuration.maxQueuedBytes && acceptsMessages {
            try await withCheckedThrowingContinuation { queueSpaceWaiters.append($0) }
        }
        guard acceptsMessages else {
            throw closeReasonForSending
        }
    }

    private func abandonReply(to number: UInt64) {
        pendingReplies.removeValue(forKey: number)?.fail(CancellationError())
    }

    /// Starts the writer unless it is running: it runs while there is something to write and then ends, so that
    /// an idle connection holds no task for it.
    func wakeWriter() {
        guard !isWriterRunning, let writer else { return }
        switch state {
        case .idle, .closed:
            return
        case .running, .closing:
            isWriterRunning = true
            Task { await self.writeLoop(writer) }
        }
    }

    enum WriterStep {
        case frames([[UInt8]])
        case close(WebSocketCloseCode, reason: String?)
        /// Nothing is ready, or the connection has closed; `wakeWriter()` starts a writer again.
        case stop
    }

    static let maxBytesPerWriterTurn = 256 * 1024

    /// The writer's next step: the frames that are ready, or a requested close once everything ready has been
    /// sent.
    func nextWriterStep() -> WriterStep {
        switch state {
        case .idle, .closed:
            isWriterRunning = false
            return .stop
        case .running, .closing:
            break
        }
        // Everything ready goes to the writer in one turn (up to a bound), so a burst of small
        // messages costs one hop to this actor rather than one per frame.
        var frames: [[UInt8]] = []
        var byteCount = 0
        while byteCount < Self.maxBytesPerWriterTurn, let frame = outbox.nextFrame() {
            byteCount += frame.count
            frames.append(frame)
        }
        if !frames.isEmpty {
            sentSinceQuietCheck = true
            if outbox.pendingBytes < configuration.maxQueuedBytes && !queueSpaceWaiters.isEmpty {
                let waiters = queueSpaceWaiters
                queueSpaceWaiters.removeAll()
                for waiter in waiters {
                    waiter.resume()
                }
            }
            return .frames(frames)
        }
        if case .closing(let code, let reason) = state {
            return .close(code, reason: reason)
        }
        isWriterRunning = false
        return .stop
    }

    /// The only writer of frames, so that frames reach the socket in the order they were encoded: the
    /// running CRC and deflate stream depend on it.
    nonisolated func writeLoop(_ writer: some BLIPFrameWriter) async {
        while true {
            switch await nextWriterStep() {
            case .frames(let frames):
                do {
                    for frame in frames {
                        try await writer.write(frame: frame)
                    }
                } catch {
                    await finish(.writeFailed(String(describing: error)))
                    return
                }
            case .close(let code, let reason):
                await finish(.closedLocally(code))
                try? await writer.close(code, reason: reason)
                return
            case .stop:
                return
            }
        }
    }
}
