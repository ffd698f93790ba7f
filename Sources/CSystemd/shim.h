// libsystemd, non-variadic entry points only: sd_notify, sd_watchdog_enabled,
// sd_listen_fds and sd_journal_sendv (Swift cannot call C variadics).
#include <sys/types.h>
#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
