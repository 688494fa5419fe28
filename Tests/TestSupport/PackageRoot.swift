import Foundation

/// The package's root directory, for the files tests read from the repository (config/, docs, fixtures).
package let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()
