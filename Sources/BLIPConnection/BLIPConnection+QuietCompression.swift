extension BLIPConnection {
    /// Frees the outgoing deflate stream if no frame went out since the last call and nothing waits to be sent;
    /// returns whether one was freed. Called at a steady interval, it frees the streams of connections that have
    /// been quiet for at least one interval.
    ///
    /// A caught-up continuous puller (a shop's handheld between price updates) keeps its connection open for
    /// hours, and its deflate stream, set up with its first compressed frame, would stay for all of them: tens
    /// of KiB per device, a second copy of the fleet's memory after one write reached every device. The next
    /// compressed frame sets up a fresh stream (`BLIPFrameEncoder.releaseCompressionState`).
    package func releaseCompressionStateIfQuiet() -> Bool {
        defer { sentSinceQuietCheck = false }
        guard !sentSinceQuietCheck, case .running = state else { return false }
        return outbox.releaseCompressionStateIfIdle()
    }

    /// Whether the outgoing deflate stream is set up.
    package var holdsCompressionState: Bool { outbox.holdsCompressionState }
}
