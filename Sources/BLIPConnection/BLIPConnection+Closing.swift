import BLIPCodec

extension BLIPConnection {
    /// Closes the connection: frames already ready are sent, then the close frame with `code`.
    ///
    /// Requests still waiting for replies fail with `BLIPConnectionError.closedLocally`.
    public func close(_ code: WebSocketCloseCode = .normal, reason: String? = nil) {
        guard case .running = state else { return }
        state = .closing(code, reason: reason.map(Self.closeReasonText))
        wakeWriter()
    }

    /// Closes at once after a failure, logging it and telling the peer why.
    func fail(_ error: BLIPConnectionError) async {
        if case .closed = state { return }
        logger.error(
            "closing BLIP connection",
            metadata: ["blip.error": "\(error)", "ws.close_code": "\(error.closeCode)"]
        )
        finish(error)
        try? await writer?.close(error.closeCode, reason: Self.closeReasonText(error.description))
    }

    /// Marks the connection closed and releases everyone waiting on it.
    func finish(_ reason: BLIPConnectionError) {
        if case .closed = state { return }
        let failure: BLIPConnectionError
        if case .closing(let code, _) = state {
            failure = .closedLocally(code)
        } else {
            failure = reason
        }
        state = .closed(failure)
        let replies = pendingReplies
        pendingReplies.removeAll()
        for waiter in replies.values {
            waiter.fail(failure)
        }
        let waiters = queueSpaceWaiters
        queueSpaceWaiters.removeAll()
        for waiter in waiters {
            waiter.resume(throwing: failure)
        }
        wakeWriter()
    }

    /// A close frame's reason must fit in 123 bytes of UTF-8.
    static func closeReasonText(_ text: String) -> String {
        var result = ""
        var length = 0
        for character in text {
            length += character.utf8.count
            guard length <= 123 else { break }
            result.append(character)
        }
        return result
    }
}
