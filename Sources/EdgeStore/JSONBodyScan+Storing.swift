import Foundation
import SyncJSON

extension JSONBodyScan {
    /// Scans a body the store is asked to keep: validated as a JSON object, with the blobs it refers to.
    init(storing body: Data) throws(StoreError) {
        let result: Result<JSONBodyScan, JSONBodyError> = body.withUnsafeBytes { raw in
            do throws(JSONBodyError) {
                return .success(try JSONBodyScan(scanning: raw))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let scan): self = scan
        case .failure(let error): throw .invalidJSON(reason: error.description)
        }
    }
}
