import Store

/// Parameters of one statement as it is written: `bind` appends a value
/// and answers its typed placeholder (`$3::text`).
final class ParameterList {
    private(set) var values: [SQLValue]
    private let dialect = PostgresDialect()

    init(_ values: [SQLValue] = []) { self.values = values }

    func bind(_ value: SQLValue) -> String {
        values.append(value)
        return dialect.placeholder(values.count, for: value)
    }
}
