#ifndef ROOST_LUA_H
#define ROOST_LUA_H
// Everything around Lua 5.4 that can longjmp lives in C (roost_lua.c): the
// allocator with its caps, the count hook with the call's deadline, the
// protected call, loading, and the trampoline through which Lua calls
// Swift. Swift host functions return a status; the trampoline raises.
// Swift may call the plain lua_* functions below only in their raw forms
// (lua_rawget*, lua_next, lua_rawlen) while a host function runs: the
// allocator never fails then, and no metamethod runs.
#include <stddef.h>
#include <stdint.h>
#include <lua5.4/lua.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Why a protected call failed, beyond its Lua status (bit flags).
enum {
    ROOST_LUA_TIMED_OUT = 1,
    ROOST_LUA_OUT_OF_MEMORY = 2,
};

/// A Swift host function: reads its arguments from the stack, pushes its
/// results and returns how many; or pushes an error message and returns -1
/// (the trampoline raises it as a Lua error). `id` names the function.
typedef int (*roost_lua_host)(lua_State *L, int id);

/// Installs the one function every host call goes to (once, at start).
void roost_lua_set_host(roost_lua_host host);

/// A new state whose allocations never pass `memory_cap` bytes, with the
/// safe libraries open and the template of the sandbox built (see
/// roost_lua_push_env). The string metatable is locked. NULL when out of memory.
lua_State *roost_lua_open(size_t memory_cap);
void roost_lua_close(lua_State *L);

/// An opaque pointer the host keeps with the state (its Swift owner).
void roost_lua_set_user(lua_State *L, void *user);
void *roost_lua_user(lua_State *L);

/// Bytes the state holds now.
size_t roost_lua_memory(lua_State *L);
/// Bytes the state holds after a full garbage collection, as Lua counts
/// them (lua_gc LUA_GCCOUNT and LUA_GCCOUNTB). Call between calls only.
size_t roost_lua_idle_memory(lua_State *L);

/// Starts a budgeted call: past `budget_ns` from now the count hook
/// raises (and keeps raising on every instruction), and allocations past
/// the current use plus `call_cap` bytes fail. Calls nest (a host function
/// may call back into Lua): the outer budget stays in force.
void roost_lua_begin(lua_State *L, int64_t budget_ns, size_t call_cap);
/// Ends the outermost budgeted call; returns its ROOST_LUA_* flags.
int roost_lua_end(lua_State *L);
/// Nanoseconds left of the running call's budget (0 when none runs or it is spent).
int64_t roost_lua_remaining_ns(lua_State *L);
/// The ROOST_LUA_* flags of the running call so far.
int roost_lua_flags(lua_State *L);

/// Loads `text` as a text chunk (never bytecode) named `chunkname`; on
/// success the chunk is on the stack with `_ENV` set to the table below it
/// (which is popped). Returns a Lua status; on error the message is on top.
int roost_lua_load_text(lua_State *L, const char *text, size_t len, const char *chunkname);

/// Pushes a new sandbox environment: the safe globals copied from the
/// template, so one script's globals never reach another's.
void roost_lua_push_env(lua_State *L);

/// lua_pcall with a message handler that adds a traceback. Returns the Lua
/// status; on error the message (with the traceback) is on top.
int roost_lua_pcall(lua_State *L, int nargs, int nresults);

/// Pushes a Lua function that calls the host function `id`.
void roost_lua_push_host(lua_State *L, int id);

/// Pushes a read-only view of the table at `idx` (assignments raise,
/// getmetatable gives "locked").
void roost_lua_push_readonly(lua_State *L, int idx);

/// "file:line" of the Lua function `level` frames up (1: the caller of the
/// running C function), into `buf`.
void roost_lua_where(lua_State *L, int level, char *buf, size_t len);

/// Swift code that pushes or reads values outside a host function wraps
/// them in hold(+1) … hold(-1): allocations cannot fail (and longjmp) meanwhile.
void roost_lua_hold(lua_State *L, int delta);

/// The macros Swift cannot import.
void roost_lua_pop(lua_State *L, int n);
const char *roost_lua_tolstring(lua_State *L, int idx, size_t *len);
void roost_lua_newtable(lua_State *L);
int roost_lua_isfunction(lua_State *L, int idx);
int roost_lua_ref(lua_State *L);
void roost_lua_unref(lua_State *L, int ref);
void roost_lua_getref(lua_State *L, int ref);
int roost_lua_upvalueindex(int i);

/// The caps on string patterns (find, match, gmatch, gsub), exposed for tests.
extern const size_t roost_lua_pattern_subject_max;

#ifdef __cplusplus
}
#endif
#endif
