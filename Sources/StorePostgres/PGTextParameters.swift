import Foundation
import Store

/// Statement parameters as C strings (NULL for `.null`), owned until this
/// value is released: the text form libpq sends.
final class PGTextParameters {
    private let owned: [UnsafeMutablePointer<CChar>?]
    /// The strings, in the form libpq's functions take.
    let values: [UnsafePointer<CChar>?]

    /// Fails, before anything is sent, on a value PostgreSQL cannot take:
    /// a non-finite number or text with NUL.
    init(_ params: [SQLValue]) throws {
        var owned: [UnsafeMutablePointer<CChar>?] = []
        owned.reserveCapacity(params.count)
        do {
            for value in params {
                switch value {
                case .null: owned.append(nil)
                case .int(let i): owned.append(strdup(String(i)))
                case .double(let d):
                    guard d.isFinite else { throw StoreError.invalid("A number must be finite.") }
                    owned.append(strdup("\(d)"))
                case .text(let s):
                    guard !s.utf8.contains(0) else { throw StoreError.invalid("Text may not contain the NUL character.") }
                    owned.append(strdup(s))
                }
            }
        } catch {
            for p in owned { free(p) }
            throw error
        }
        self.owned = owned
        values = owned.map { $0.map { UnsafePointer($0) } }
    }

    deinit { for p in owned { free(p) } }
}

extension PGConnection {
    /// Calls `body` with C strings for `params`, alive for the call.
    func withTextParameters<R>(_ params: [SQLValue], _ body: ([UnsafePointer<CChar>?]) -> R) throws -> R {
        let text = try PGTextParameters(params)
        return withExtendedLifetime(text) { body(text.values) }
    }
}
