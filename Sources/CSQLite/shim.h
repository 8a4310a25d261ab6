#include <sqlite3.h>

/// Turns off SQLite's memory statistics before the library initializes: with them on, every allocation
/// takes one process-wide mutex, which the rule stage's reader threads then contend on. `sqlite3_config`
/// is variadic, which Swift cannot call; this wrapper is not. Returns SQLITE_MISUSE once SQLite is in use.
static inline int iapguard_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
