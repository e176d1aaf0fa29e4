#ifndef CCRELAY_CLINUX_SHIM_H
#define CCRELAY_CLINUX_SHIM_H
/* Linux and glibc calls the Swift Glibc module does not export. */
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <signal.h>
#include <libintl.h>
#include <locale.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* prctl(2) is variadic, which Swift cannot call: the parent-death signal alone. */
static inline int ccrelay_die_with_parent(int signal) { return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0, 0, 0); }
#endif
