# ccrelay — the two commands of the README are `make demo` and `make test`;
# both install what is missing first (scripts/bootstrap).

SWIFT_DIR := $(wildcard /opt/swift/usr/bin)
ifneq ($(SWIFT_DIR),)
export PATH := $(SWIFT_DIR):$(PATH)
endif

SWIFT ?= swift
LANGUAGES := zh_CN zh_TW
PO_DIR := resources/po
PREFIX ?= /usr/local
DESTDIR ?=
# What install and deb ship: release, the Swift runtime linked in, the keep-alive path laid out together (packaging/release-build).
RELEASE := packaging/release-build .build/release-static

.PHONY: all bootstrap build locale pot test desktops fuzz demo screenshot install uninstall deb dist clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build
	@$(MAKE) --no-print-directory locale BIN="$$($(SWIFT) build --show-bin-path)"

# Compiles the catalogues next to the binaries, where ccrelay finds them,
# links the demo there, where `ccrelay demo` finds it, and the icons, where
# the tray icon's IconThemePath points.
locale:
	@test -n "$(BIN)" || { echo "make locale needs BIN=<swift build --show-bin-path>"; exit 1; }
	@ln -sf "$(CURDIR)/scripts/ccrelay-demo" "$(BIN)/ccrelay-demo"
	@ln -sfn "$(CURDIR)/resources/icons" "$(BIN)/icons"
	@for lang in $(LANGUAGES); do \
		mkdir -p "$(BIN)/locale/$$lang/LC_MESSAGES" && \
		msgfmt --check -o "$(BIN)/locale/$$lang/LC_MESSAGES/ccrelay.mo" "$(PO_DIR)/$$lang.po" || exit 1; \
	done

# Re-extracts the message catalogue template from the sources (xgettext-swift:
# xgettext with Swift's multi-line strings rewritten as C strings).
pot:
	scripts/xgettext-swift $(PO_DIR)/ccrelay.pot $$(grep -rlE 'localize\(|\.plural\(' Sources --include=*.swift | sort) \
		-- --no-wrap --package-name=ccrelay
	@for lang in $(LANGUAGES); do msgmerge --quiet --no-wrap --backup=none --update $(PO_DIR)/$$lang.po $(PO_DIR)/ccrelay.pot; done

test: build deb dist
	@# Every libFuzzer target briefly (6 x 8 s; `make fuzz` runs them long), then the tests.
	scripts/fuzz 8
	scripts/with-private-desktop $(SWIFT) test --disable-xctest
	@# A test that starts a daemon ends it (or its bus's end does): none may be left.
	scripts/no-daemons-left

# The chroots with real GNOME Shell 43 and KDE Plasma 5.27 that RealDesktopTests
# run ccrelay under (as root; once, about 3 GB; again when a package list changes).
desktops:
	scripts/desktops/build-chroot

# Each libFuzzer target for FUZZ_SECONDS (default 300): scripts/fuzz.
FUZZ_SECONDS ?= 300
fuzz: bootstrap
	scripts/fuzz $(FUZZ_SECONDS)

demo: build
	@scripts/demo "$$($(SWIFT) build --show-bin-path)"

# The README's pictures: every alert shown by dunst on a private Xvfb desktop,
# and the tray icon with its menu on a real tray host.
screenshot: build
	scripts/screenshot "$$($(SWIFT) build --show-bin-path)" docs/notify-test.png
	scripts/screenshot-tray "$$($(SWIFT) build --show-bin-path)" docs/tray.png

install: bootstrap
	@for product in ccrelay ccrelay-daemon ccsim; do $(RELEASE) --product $$product || exit 1; done
	packaging/install "$$($(RELEASE) --show-bin-path)" "$(PREFIX)" "$(DESTDIR)"

uninstall:
	packaging/install - "$(PREFIX)" "$(DESTDIR)" --uninstall

# .build/deb/ccrelay_VERSION_ARCH.deb, checked by lintian.
deb: bootstrap
	packaging/build-deb .build/deb

# .build/dist/ccrelay-VERSION-ARCH.tar.gz with its install.sh, for a machine not online yet.
dist: bootstrap
	packaging/build-dist .build/dist

clean:
	rm -rf .build demo-out
