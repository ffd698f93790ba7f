// Lua 5.4 for roostd's scripts: see include/roost_lua.h.
#include "roost_lua.h"
#include <lua5.4/lauxlib.h>
#include <lua5.4/lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// What each state carries beside Lua's own: the allocator's account and the running call's budget.
typedef struct {
    size_t used;
    size_t state_cap;
    /// Allocations past this fail while a budgeted call runs (0: only state_cap).
    size_t call_limit;
    /// >0 while a host function (Swift) runs: allocations never fail then, so a push cannot longjmp.
    int in_host;
    /// Nesting of roost_lua_begin.
    int depth;
    int64_t deadline_ns;
    int flags;
    void *user;
} roost_lua_account;

static roost_lua_host host_function;
/// The instructions between two looks at the clock.
static const int hook_interval = 1000;
const size_t roost_lua_pattern_subject_max = 64 * 1024;
static const size_t pattern_max = 256;
/// The most character tests a pattern call may be able to make (pattern_work): about 0.1 s at worst.
static const double pattern_work_max = 2e7;
enum { pattern_find, pattern_gmatch, pattern_other };
/// The most elements one table.move may move (it loops in C, out of the hook's reach).
static const lua_Integer move_max = 1 << 20;

static const char *template_key = "roost.sandbox";
static const char *timeout_message = "roost: the script ran past its time budget";

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static roost_lua_account *account(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return (roost_lua_account *)ud;
}

static void *allocate(void *ud, void *ptr, size_t osize, size_t nsize) {
    roost_lua_account *a = (roost_lua_account *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        a->used -= old;
        return NULL;
    }
    if (nsize > old && a->in_host == 0) {
        size_t grown = a->used - old + nsize;
        size_t limit = a->state_cap;
        if (a->call_limit && a->call_limit < limit) limit = a->call_limit;
        if (grown > limit) {
            a->flags |= ROOST_LUA_OUT_OF_MEMORY;
            return NULL;
        }
    }
    void *p = realloc(ptr, nsize);
    if (p) a->used = a->used - old + nsize;
    else a->flags |= ROOST_LUA_OUT_OF_MEMORY;
    return p;
}

/// Every `hook_interval` instructions: past the deadline, raise, and from
/// then on raise on every instruction, so a pcall cannot swallow it for long.
static void count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    roost_lua_account *a = account(L);
    if (a->deadline_ns == 0 || now_ns() < a->deadline_ns) return;
    a->flags |= ROOST_LUA_TIMED_OUT;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    luaL_error(L, "%s", timeout_message);
}

void roost_lua_set_host(roost_lua_host host) { host_function = host; }

static int trampoline(lua_State *L) {
    roost_lua_account *a = account(L);
    int id = (int)lua_tointeger(L, lua_upvalueindex(1));
    a->in_host++;
    int n = host_function ? host_function(L, id) : -1;
    a->in_host--;
    if (n < 0) {
        if (!host_function) lua_pushstring(L, "roost: no host");
        return lua_error(L);
    }
    // A budget that ran out inside (a callback) keeps stopping the script.
    if (a->flags & ROOST_LUA_TIMED_OUT) return luaL_error(L, "%s", timeout_message);
    return n;
}

void roost_lua_push_host(lua_State *L, int id) {
    lua_pushinteger(L, id);
    lua_pushcclosure(L, trampoline, 1);
}

// MARK: the sandbox

/// setmetatable that refuses a metatable with __gc (a finalizer would run outside any budget).
static int safe_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushstring(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL) return luaL_error(L, "roost: __gc metamethods are not allowed in scripts");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/// A script's xpcall message handler, run only while the budget lasts: past
/// it the error goes on unchanged, since a handler that raised would be
/// called again for its own error, and again, without end.
static int guarded_handler(lua_State *L) {
    if (account(L)->flags & ROOST_LUA_TIMED_OUT) return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/// xpcall(f, handler, ...) with the handler guarded (above).
static int safe_xpcall(lua_State *L) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int readonly_newindex(lua_State *L) {
    return luaL_error(L, "roost: this table is read-only");
}

void roost_lua_push_readonly(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_createtable(L, 0, 0);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushstring(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
}

/// The length of the single-character class at `p` (`.`, `x`, `%a`, `[set]`), at most to `end`.
static size_t class_length(const char *p, const char *end) {
    if (p >= end) return 0;
    if (*p == '%') return p + 1 < end ? 2 : 1;
    if (*p != '[') return 1;
    const char *q = p + 1;
    if (q < end && *q == '^') q++;
    do {
        if (q >= end) return (size_t)(end - p);
        if (*q++ == '%' && q < end) q++;
    } while (q >= end || *q != ']');
    return (size_t)(q + 1 - p);
}

/// True when the rest of a pattern matches anywhere (nothing but capture
/// ends): the first choice of the item before it succeeds, so it has one way, not many.
static int rest_matches_at_once(const char *p, const char *end) {
    for (; p < end; p++) if (*p != ')') return 0;
    return 1;
}

/// An upper bound on the character tests Lua's matcher can make for pattern
/// `p` on a subject of `subject` bytes (see docs/SCRIPTING.md, "String patterns").
/// The matcher's calls form a tree: every start position is a root, and an
/// item with a choice (`*`, `+`, `-`: up to n + 1 ways; `?`: 2) multiplies
/// the calls below it. `calls` counts the tree's nodes at the current item;
/// each adds the item's own work: its class's length (a `*`/`+`/`-` item
/// tests up to n + 1 characters, `%b` and a back-reference `%1` scan up to
/// n + 1). Pattern positions only grow along a branch, so every node is
/// counted once. An item followed by nothing but `)` has one way: its
/// first try matches the (empty) rest. Lua's own MAXCCALLS (200) caps the depth. Returns at least `limit` + 1 once the bound passes `limit`.
static double pattern_work(size_t subject, const char *p, size_t plen, int anchored_starts, double limit) {
    const double n1 = (double)subject + 1;
    const char *end = p + plen;
    double calls = 1, work = 0;
    if (plen > 0 && *p == '^' && anchored_starts) p++;
    else calls = n1;
    while (p < end) {
        if (work > limit) return work;
        char c = *p;
        if (c == '(' || c == ')') { work += calls; p++; continue; }
        if (c == '$' && p + 1 == end) { work += calls; p++; continue; }
        if (c == '%' && p + 1 < end && p[1] == 'b') { work += calls * n1; p += 4; continue; }
        if (c == '%' && p + 1 < end && p[1] >= '0' && p[1] <= '9') { work += calls * n1; p += 2; continue; }
        if (c == '%' && p + 1 < end && p[1] == 'f') {
            size_t len = class_length(p + 2, end);
            work += calls * (double)(len + 2);
            p += 2 + (len ? len : 1);
            continue;
        }
        size_t len = class_length(p, end);
        if (len == 0) len = 1;
        const char *next = p + len;
        char suffix = next < end ? *next : 0;
        if (suffix == '*' || suffix == '+' || suffix == '-') {
            work += calls * n1 * (double)len;
            if (!rest_matches_at_once(next + 1, end)) calls *= n1;
            p = next + 1;
        } else if (suffix == '?') {
            work += calls * (double)len;
            if (!rest_matches_at_once(next + 1, end)) calls *= 2;
            p = next + 1;
        } else {
            work += calls * (double)len;
            p = next;
        }
    }
    return work + calls;
}

/// string.find, match, gmatch, gsub with caps on subject and pattern (they run in C, out of the hook's reach).
static int capped_pattern(lua_State *L) {
    size_t slen = 0, plen = 0;
    if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) lua_tolstring(L, 1, &slen);
    const char *p = NULL;
    if (lua_type(L, 2) == LUA_TSTRING) p = lua_tolstring(L, 2, &plen);
    int kind = (int)lua_tointeger(L, lua_upvalueindex(2));
    int plain = kind == pattern_find && lua_toboolean(L, 4);
    int is_gmatch = kind == pattern_gmatch;
    if (slen > roost_lua_pattern_subject_max)
        return luaL_error(L, "roost: string patterns take subjects of at most %d bytes", (int)roost_lua_pattern_subject_max);
    if (plen > pattern_max) return luaL_error(L, "roost: string patterns are at most %d bytes", (int)pattern_max);
    if (p && !plain && pattern_work(slen, p, plen, !is_gmatch, pattern_work_max) > pattern_work_max)
        return luaL_error(L, "roost: this pattern could backtrack too long on a subject of %d bytes (see String patterns in docs/SCRIPTING.md)", (int)slen);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/// Replaces `name` in the table on top with its capped form.
static void cap_pattern_function(lua_State *L, const char *name, int kind) {
    lua_getfield(L, -1, name);
    lua_pushinteger(L, kind);
    lua_pushcclosure(L, capped_pattern, 2);
    lua_setfield(L, -2, name);
}

/// Calls the original function (upvalue 1) with this call's arguments.
static int call_original(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/// string.rep that answers "" at once for an empty piece and separator
/// (the stock one would loop n times in C making nothing: rep("", 2^50)).
/// Any other result is allocated whole first, so the memory cap stops it.
static int safe_rep(lua_State *L) {
    size_t len = 0, sep = 0;
    luaL_checklstring(L, 1, &len);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &sep);
    if (n <= 0 || len + sep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    return call_original(L);
}

/// table.move of at most move_max elements (the stock one loops over any
/// range in C, even of nils that take no memory: move({}, 1, 1e15, 2)).
static int safe_move(lua_State *L) {
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    if (e >= f && (lua_Unsigned)e - (lua_Unsigned)f >= (lua_Unsigned)move_max)
        return luaL_error(L, "roost: table.move moves at most %d elements", (int)move_max);
    return call_original(L);
}

/// table.sort always with a Lua comparator (a < b by default), so the count
/// hook runs during the sort: the stock one compares in C, out of its reach.
static const char sort_source[] =
    "local sort = ...\n"
    "local function less(a, b) return a < b end\n"
    "return function(t, f) if f == nil then f = less end return sort(t, f) end\n";

/// Puts the hook-safe table.move and table.sort into the table library on top.
static void guard_table_library(lua_State *L) {
    lua_getfield(L, -1, "move");
    lua_pushcclosure(L, safe_move, 1);
    lua_setfield(L, -2, "move");
    if (luaL_loadbufferx(L, sort_source, sizeof sort_source - 1, "=roost.sort", "t") == LUA_OK) {
        lua_getfield(L, -2, "sort");
        lua_call(L, 1, 1);
        lua_setfield(L, -2, "sort");
    } else {
        lua_pop(L, 1);
        lua_pushnil(L);
        lua_setfield(L, -2, "sort");
    }
}

/// Copies the named fields of the library table on top into a new table, left on top.
static void copy_fields(lua_State *L, const char *const *names) {
    int lib = lua_gettop(L);
    lua_createtable(L, 0, 16);
    for (; *names; names++) {
        lua_getfield(L, lib, *names);
        lua_setfield(L, -2, *names);
    }
    lua_remove(L, lib);
}

static const char *const base_names[] = {
    "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget", "rawlen",
    "rawset", "select", "tonumber", "tostring", "type", "xpcall", "_VERSION", NULL};
static const char *const os_names[] = {"time", "clock", "date", NULL};
static const char *const string_names[] = {
    "byte", "char", "find", "format", "gmatch", "gsub", "len", "lower", "match", "pack", "packsize", "rep",
    "reverse", "sub", "unpack", "upper", NULL};

/// Builds the template every script's environment is copied from, in the registry.
static void build_template(lua_State *L) {
    luaL_requiref(L, "_G", luaopen_base, 1); lua_pop(L, 1);
    luaL_requiref(L, "string", luaopen_string, 1); lua_pop(L, 1);
    luaL_requiref(L, "table", luaopen_table, 1); lua_pop(L, 1);
    luaL_requiref(L, "math", luaopen_math, 1); lua_pop(L, 1);
    luaL_requiref(L, "utf8", luaopen_utf8, 1); lua_pop(L, 1);
    luaL_requiref(L, "os", luaopen_os, 1); lua_pop(L, 1);

    // The real string library (the string metatable's __index) gets the capped pattern functions too.
    lua_getglobal(L, "string");
    cap_pattern_function(L, "find", pattern_find);
    cap_pattern_function(L, "match", pattern_other);
    cap_pattern_function(L, "gmatch", pattern_gmatch);
    cap_pattern_function(L, "gsub", pattern_other);
    lua_getfield(L, -1, "rep");
    lua_pushcclosure(L, safe_rep, 1);
    lua_setfield(L, -2, "rep");
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    lua_getglobal(L, "table");
    guard_table_library(L);
    lua_pop(L, 1);

    // Lock the string metatable: getmetatable("") gives "locked", its __index stays out of reach.
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    lua_createtable(L, 0, 32);
    int tmpl = lua_gettop(L);
    lua_pushglobaltable(L);
    copy_fields(L, base_names);
    lua_pushnil(L);
    while (lua_next(L, -2)) { lua_pushvalue(L, -2); lua_insert(L, -2); lua_settable(L, tmpl); }
    lua_pop(L, 1);
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, safe_setmetatable, 1);
    lua_setfield(L, tmpl, "setmetatable");
    lua_getglobal(L, "xpcall");
    lua_pushcclosure(L, safe_xpcall, 1);
    lua_setfield(L, tmpl, "xpcall");
    lua_getglobal(L, "string"); copy_fields(L, string_names); lua_setfield(L, tmpl, "string");
    lua_getglobal(L, "os"); copy_fields(L, os_names); lua_setfield(L, tmpl, "os");
    const char *const plain_libs[] = {"table", "math", "utf8", NULL};
    for (const char *const *lib = plain_libs; *lib; lib++) {
        lua_getglobal(L, *lib);
        lua_createtable(L, 0, 32);
        lua_pushnil(L);
        while (lua_next(L, -3)) { lua_pushvalue(L, -2); lua_insert(L, -2); lua_settable(L, -4); }
        lua_remove(L, -2);
        lua_setfield(L, tmpl, *lib);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, template_key);

    // Nothing but the template stays reachable: the real globals are emptied of what scripts must not see.
    const char *const unsafe[] = {"load", "loadstring", "dofile", "loadfile", "require", "collectgarbage", "print",
                                  "io", "debug", "package", "coroutine", NULL};
    for (const char *const *name = unsafe; *name; name++) { lua_pushnil(L); lua_setglobal(L, *name); }
}

/// Copies the library tables of the template, so a script's changes to `string` or `math` stay its own.
void roost_lua_push_env(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, template_key);
    int tmpl = lua_gettop(L);
    lua_createtable(L, 0, 40);
    int env = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, tmpl)) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            int lib = lua_gettop(L);
            lua_createtable(L, 0, 32);
            lua_pushnil(L);
            while (lua_next(L, lib)) { lua_pushvalue(L, -2); lua_insert(L, -2); lua_rawset(L, -4); }
            lua_replace(L, lib);
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, env);
    }
    lua_pushvalue(L, env);
    lua_setfield(L, env, "_G");
    lua_remove(L, tmpl);
}

lua_State *roost_lua_open(size_t memory_cap) {
    roost_lua_account *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->state_cap = memory_cap;
    lua_State *L = lua_newstate(allocate, a);
    if (!L) { free(a); return NULL; }
    a->in_host = 1; // building the template must not fail half-way
    build_template(L);
    a->in_host = 0;
    return L;
}

void roost_lua_close(lua_State *L) {
    if (!L) return;
    roost_lua_account *a = account(L);
    a->in_host = 1;
    lua_close(L);
    free(a);
}

void roost_lua_set_user(lua_State *L, void *user) { account(L)->user = user; }
void *roost_lua_user(lua_State *L) { return account(L)->user; }
size_t roost_lua_memory(lua_State *L) { return account(L)->used; }

size_t roost_lua_idle_memory(lua_State *L) {
    roost_lua_account *a = account(L);
    a->in_host++;
    lua_gc(L, LUA_GCCOLLECT);
    size_t bytes = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
    a->in_host--;
    return bytes;
}

void roost_lua_begin(lua_State *L, int64_t budget_ns, size_t call_cap) {
    roost_lua_account *a = account(L);
    if (a->depth++ > 0) return;
    a->flags = 0;
    a->deadline_ns = now_ns() + (budget_ns > 0 ? budget_ns : 1);
    a->call_limit = call_cap ? a->used + call_cap : 0;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, hook_interval);
}

int roost_lua_end(lua_State *L) {
    roost_lua_account *a = account(L);
    if (a->depth == 0 || --a->depth > 0) return a->flags;
    lua_sethook(L, NULL, 0, 0);
    a->deadline_ns = 0;
    a->call_limit = 0;
    int flags = a->flags;
    a->flags = 0;
    return flags;
}

int roost_lua_flags(lua_State *L) { return account(L)->flags; }

int64_t roost_lua_remaining_ns(lua_State *L) {
    roost_lua_account *a = account(L);
    if (a->deadline_ns == 0) return 0;
    int64_t left = a->deadline_ns - now_ns();
    return left > 0 ? left : 0;
}

int roost_lua_load_text(lua_State *L, const char *text, size_t len, const char *chunkname) {
    int status = luaL_loadbufferx(L, text, len, chunkname, "t");
    if (status != LUA_OK) { lua_remove(L, -2); return status; }
    lua_pushvalue(L, -2);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    lua_remove(L, -2);
    return LUA_OK;
}

static int message_handler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
        else msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int roost_lua_pcall(lua_State *L, int nargs, int nresults) {
    roost_lua_account *a = account(L);
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    int saved = a->in_host;
    a->in_host = 0;
    int status = lua_pcall(L, nargs, nresults, base);
    a->in_host = saved;
    lua_remove(L, base);
    return status;
}

void roost_lua_where(lua_State *L, int level, char *buf, size_t len) {
    lua_Debug ar;
    buf[0] = 0;
    for (; lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            const char *src = ar.source[0] == '@' || ar.source[0] == '=' ? ar.source + 1 : ar.short_src;
            snprintf(buf, len, "%s:%d", src, ar.currentline);
            return;
        }
    }
}

void roost_lua_hold(lua_State *L, int delta) { account(L)->in_host += delta; }
void roost_lua_pop(lua_State *L, int n) { lua_pop(L, n); }
const char *roost_lua_tolstring(lua_State *L, int idx, size_t *len) { return lua_tolstring(L, idx, len); }
void roost_lua_newtable(lua_State *L) { lua_createtable(L, 0, 0); }
int roost_lua_isfunction(lua_State *L, int idx) { return lua_isfunction(L, idx); }
int roost_lua_ref(lua_State *L) { return luaL_ref(L, LUA_REGISTRYINDEX); }
void roost_lua_unref(lua_State *L, int ref) { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
void roost_lua_getref(lua_State *L, int ref) { lua_rawgeti(L, LUA_REGISTRYINDEX, ref); }
int roost_lua_upvalueindex(int i) { return lua_upvalueindex(i); }
