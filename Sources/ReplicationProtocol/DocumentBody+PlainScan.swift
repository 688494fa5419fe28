import SyncJSON

extension DocumentBody {
    /// Whether `bytes` is a JSON object that can be stored and sent exactly as it came: no top-level `_`
    /// property to strip or refuse, and no `@type` key at any depth, so no blob to fetch
    /// (`JSONBodyScan.isPlain`). One pass over the bytes decides, without building a `JSONValue` tree; almost
    /// every received body is like this. A body it is unsure of takes the full parse, which gives the precise
    /// error.
    package static func isPlain(_ bytes: [UInt8]) -> Bool {
        (try? JSONBodyScan(scanning: bytes))?.isPlain ?? false
    }
}
