/// Stream slots: `live_max_connections` in all, `live_max_per_address` per
/// client address and `live_max_per_account` per signed-in user, reserved
/// once the caller is known and given back when the stream ends.
extension LiveHub {
    /// Why a new stream was refused.
    enum Refusal { case full, perAddress, perAccount }

    /// Whether a new stream from `address` would be refused now, without
    /// reserving anything: the loop's cheap early answer before the caller is found.
    func wouldRefuse(address: String) -> Refusal? {
        condition.lock(); defer { condition.unlock() }
        guard !stopped, open < maxStreams else { return .full }
        return openByAddress[address, default: 0] < maxPerAddress ? nil : .perAddress
    }

    /// Reserves a slot for a new stream from `address` (a client address as
    /// the throttles key it) by `account` (a signed-in user's id): `.full`
    /// past `live_max_connections`, `.perAddress` past `live_max_per_address`,
    /// `.perAccount` past `live_max_per_account`, nil when reserved. Called
    /// once the caller is known, so a refused caller takes no slot.
    func reserve(address: String, account: String?) -> Refusal? {
        condition.lock(); defer { condition.unlock() }
        guard !stopped, open < maxStreams else { return .full }
        guard openByAddress[address, default: 0] < maxPerAddress else { return .perAddress }
        if let account, openByAccount[account, default: 0] >= maxPerAccount { return .perAccount }
        open += 1
        openByAddress[address, default: 0] += 1
        if let account { openByAccount[account, default: 0] += 1 }
        return nil
    }

    /// Live streams open (or being opened) now.
    var openStreams: Int {
        condition.lock(); defer { condition.unlock() }
        return open
    }

    /// Gives back a slot reserved for a stream that has ended (the lock held).
    func released(address: String, account: String?) {
        open -= 1
        let left = openByAddress[address, default: 1] - 1
        openByAddress[address] = left > 0 ? left : nil
        if let account {
            let left = openByAccount[account, default: 1] - 1
            openByAccount[account] = left > 0 ? left : nil
        }
    }
}
