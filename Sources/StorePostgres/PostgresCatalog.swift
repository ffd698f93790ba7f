import Store

/// Collection names to their tables (`c_<id>`), cached per connection.
///
/// A collection's table is created by the first write to it, in that
/// write's transaction: a rollback takes the table back too, so the cache
/// is forgotten whenever a transaction fails.
final class PostgresCatalog {
    let db: PGConnection
    private var known: [String: Int64] = [:]

    init(db: PGConnection) { self.db = db }

    /// The layout of `name`, or nil when no write ever created it.
    func layout(_ name: String) throws -> CollectionLayout? {
        if let id = known[name] { return CollectionLayout(name: name, tableID: id) }
        guard let id = try db.first("SELECT id FROM _collections WHERE name = $1::text", [.text(name)], { $0.int(0) }) ?? nil else {
            return nil
        }
        known[name] = id
        return CollectionLayout(name: name, tableID: id)
    }

    /// The layout of `name`, creating its table when it has none (inside the
    /// caller's transaction). Another node creating it at the same moment
    /// waits on the unique name, then finds it.
    func ensure(_ name: String) throws -> CollectionLayout {
        if let layout = try layout(name) { return layout }
        try db.run("INSERT INTO _collections (name) VALUES ($1::text) ON CONFLICT (name) DO NOTHING", [.text(name)])
        guard let id = try db.first("SELECT id FROM _collections WHERE name = $1::text", [.text(name)], { $0.int(0) }) ?? nil else {
            throw StoreError.invalid("collection \(name) could not be created")
        }
        // The table name is built from a number only.
        try db.execute("""
            CREATE TABLE IF NOT EXISTS c_\(id) (
                rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id text COLLATE "C" NOT NULL UNIQUE,
                created_at text COLLATE "C" NOT NULL,
                updated_at text COLLATE "C" NOT NULL,
                doc json NOT NULL,
                \(Self.bodyColumnSQL)
            )
            """)
        known[name] = id
        return CollectionLayout(name: name, tableID: id)
    }

    func forgetAll() { known.removeAll() }

    /// The document twice: `doc`, `json`, is the text as written and what
    /// reads return; `body`, `jsonb`, generated from it on every write, is
    /// what filters, orders and indexes read (`PostgresDialect`). Every
    /// document Roost writes converts: its parser refuses what `jsonb`
    /// would (NUL, lone surrogates, numbers beyond a double), and its writer
    /// leaves no duplicate key.
    static let bodyColumnSQL = "body jsonb GENERATED ALWAYS AS (doc::jsonb) STORED"
}
