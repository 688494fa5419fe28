import Foundation

/// A password given as a file on the command line (`--password-file`).
enum PasswordFile {
    struct ReadError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot read the password file '\(path)': \(reason)" }
    }

    /// The file's text without the line breaks editors and `echo` add at the end. Read as a stream, so that
    /// `/dev/stdin`, a pipe or `<(…)` work as well as a regular file (whose size a pipe does not have).
    static func read(_ path: String) throws(ReadError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReadError(path: path, reason: String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let contents: Data
        do {
            contents = try handle.readToEnd() ?? Data()
        } catch {
            throw ReadError(path: path, reason: "\(error)")
        }
        guard var password = String(data: contents, encoding: .utf8) else {
            throw ReadError(path: path, reason: "it is not UTF-8 text")
        }
        while password.hasSuffix("\n") || password.hasSuffix("\r") { password.removeLast() }
        return password
    }
}
