import CLuaShim

extension LuaState {
    /// roost.http(method, url, {headers, body, timeout}).
    func http() throws -> Int32 {
        throw HostFailure("roost.http is not available in this build")
    }
}
