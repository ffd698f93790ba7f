/// Stores the settings of collections set up at run time.
public protocol CollectionSettingsWriting: AnyObject {
    /// Stores `settings` for `name` (nil: dropped) under the next version.
    /// - Parameter ifVersion: when given, the change is made only if the
    ///   record's version is still this one (0: no record), else
    ///   `StoreError.conflict`.
    /// - Returns: the stored record.
    func saveCollectionSettings(_ name: String, settings: String?, ifVersion: Int64?) throws -> CollectionSettingsRecord
}
