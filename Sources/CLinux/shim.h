#ifndef CCRELAY_CLINUX_SHIM_H
#define CCRELAY_CLINUX_SHIM_H
/* Linux and glibc calls the Swift Glibc module does not export. */
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <libintl.h>
#include <locale.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#endif
