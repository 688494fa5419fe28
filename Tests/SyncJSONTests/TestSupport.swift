import SyncJSON

func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

func json(_ text: String) throws -> JSONValue {
    try JSONValue(parsing: text)
}
