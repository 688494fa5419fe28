import Foundation

/// A fresh directory under the system's temporary directory, removed when released.
package final class TemporaryDirectory {
    package let path: String

    package init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("EdgeGatewayTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `contents` to `relativePath`, creating intermediate directories, and returns the absolute path.
    @discardableResult
    package func write(_ relativePath: String, _ contents: String) throws -> String {
        let url = URL(fileURLWithPath: path).appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    package func path(_ name: String) -> String {
        "\(path)/\(name)"
    }

    @discardableResult
    package func write(_ contents: String, to name: String) throws -> String {
        try write(Array(contents.utf8), to: name)
    }

    @discardableResult
    package func write(_ contents: [UInt8], to name: String) throws -> String {
        let path = self.path(name)
        try Data(contents).write(to: URL(fileURLWithPath: path))
        return path
    }

    package func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    package func permissions(of name: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path(name))
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    package func setPermissions(_ mode: Int, of name: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path(name))
    }
}
