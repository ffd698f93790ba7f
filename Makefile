# Roost — one command to run the daemon, one to run the tests.
#   make run    installs the system libraries (apt), builds, starts roostd on 127.0.0.1:8080
#   make test   installs, builds, runs the Swift tests and the Python API tests

APT_PACKAGES := libevent-dev libsqlite3-dev libpcre2-dev libsodium-dev pkg-config
# libvips (libvips42 and its modules): roostd does not link it but loads
# libvips.so.42 at the first image; without it image uploads answer 503.
APT_PACKAGES += libvips-dev
# libsystemd for sd_notify/journald; systemd for the unit-file, journald and
# socket-activation tests (systemd-analyze, systemd-journald, journalctl).
APT_PACKAGES += libsystemd-dev systemd
# libcurl for webhook delivery (HTTP/HTTPS POSTs from worker threads): its headers at
# build time; libcurl.so.4 is loaded at the first delivery, not linked.
APT_PACKAGES += libcurl4-openssl-dev
# nghttp2 for the push client's HTTP/2 transport to APNs and FCM (linked; CCurlShim/roost_h2_direct.c).
APT_PACKAGES += libnghttp2-dev
# OpenSSL: libcrypto for SHA-256 of uploads (SHA extensions), libssl for the
# HTTPS listeners (through libevent_openssl, which libevent-dev ships).
APT_PACKAGES += libssl-dev
# The TLS tests' real peers: the openssl command (test CA, s_client) and curl.
APT_PACKAGES += openssl curl
# jq, which the README's tour uses (tests/python/test_readme_tour.py runs it).
APT_PACKAGES += jq
# A real reverse proxy in front of roostd in the tests (started by the test on
# loopback with its own config; the package's own service is not used).
APT_PACKAGES += nginx
# nginx's stream module, to send the PROXY protocol in front of roostd in the tests.
APT_PACKAGES += libnginx-mod-stream
# Caddy (2.6) in front of roostd in the tests, from etc/caddy/Caddyfile (started by the
# test on loopback, admin API and automatic HTTPS off; the package's own service is not used).
APT_PACKAGES += caddy
# zlib for PNG chunk CRCs in the upload check.
APT_PACKAGES += zlib1g-dev
# jemalloc replaces glibc's malloc in roostd (cross-thread buffers; Sources/Daemon/Allocator.swift).
APT_PACKAGES += libjemalloc-dev
# Debian's chromium and its driver for the admin console's browser tests (Selenium; tests/python/test_console.py).
APT_PACKAGES += chromium chromium-driver
# promtool, Prometheus's own linter, checks /metrics (tests/python/test_metrics_lint.py). It comes in
# Debian's prometheus package; installed without recommends, and its service is not used.
APT_PACKAGES += prometheus
# PostgreSQL, the second storage engine (issue #17; docs/ENGINES.md). postgresql-15 is the
# server the tests start as a throwaway cluster (initdb/pg_ctl as the postgres user, loopback
# only; the package's own cluster and service are not used); on Debian 12 it also ships the
# contrib extensions (cube, earthdistance). The postgres user it creates runs the test clusters.
APT_PACKAGES += postgresql-15
# libpq's headers for the StorePostgres target; nothing links libpq: CPostgresShim loads
# libpq.so.5 (libpq5, a dependency of libpq-dev) with dlopen at the first PostgreSQL connection.
APT_PACKAGES += libpq-dev
# Lua 5.4 for operator scripts (hooks, /fn/ functions, jobs; docs/SCRIPTING.md): headers and
# liblua5.4.so, linked by the CLuaShim target. Not LuaJIT: its count hook misses compiled loops.
APT_PACKAGES += liblua5.4-dev
# Node.js only to syntax-check the console's JavaScript (`node --check`; tests/python/test_console_files.py).
APT_PACKAGES += nodejs
# HAProxy and PgBouncer run the deployment files etc/haproxy/roost.cfg and etc/pgbouncer/pgbouncer.ini
# in tests/python/test_cluster_edge.py (started by the test on loopback; the packages' services are not used).
APT_PACKAGES += haproxy pgbouncer
SWIFT_FLAGS  ?=
VENV         := .venv
PYTHON       ?= python3

.PHONY: deps build release run test test-swift test-roostkit test-python test-python-postgresql test-package test-package-debug deb dist clean install bench-deps bench bench-push bench-live-fanout bench-rules bench-collections bench-accounts bench-scale drills

# Installs the C libraries Roost links against or loads, only when one is missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	swift build $(SWIFT_FLAGS)

release: deps
	swift build -c release $(SWIFT_FLAGS)

# etc/roost/dev.yaml makes `locations` and files public, as the Tour My Town
# client (which has no accounts) expects.
run: build
	.build/debug/roostd serve --config etc/roost/dev.yaml $(ARGS)

$(VENV)/.ready: tests/python/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -r tests/python/requirements.txt
	touch $@

test-swift: build
	swift build --build-tests
	swift test --skip-build --skip RoostKitIntegrationTests
	swift test --skip-build --filter RoostKitIntegrationTests

# RoostKit's own unit tests, in its own package (no roostd). `make test` runs them too, in
# tests/python/test_roostkit_package.py, on the package as published (a standalone clone).
test-roostkit:
	cd Clients/RoostKit && swift build --build-tests && swift test --skip-build

# The API tests run in PYTEST_WORKERS processes (pytest-xdist, a file per worker at a
# time, each worker with its own roostd and PostgreSQL); the files that measure time,
# memory or load (marked `serial` in tests/python/conftest.py) run afterwards, alone
# (pytest's status 5, no test selected, is not a failure). Most API tests wait on the
# daemons they start, so the workers outnumber the cores. Files are handed out in the order
# tests/python/conftest.py gives them (LONGEST_FIRST), not xdist's (most tests first).
PYTEST_WORKERS ?= 3
PYTEST_SPLIT    = -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not serial"
PYTEST_SQLITE   = ROOSTD=$(CURDIR)/.build/debug/roostd $(VENV)/bin/pytest -q
PYTEST_PG       = ROOST_TEST_ENGINE=postgresql $(PYTEST_SQLITE)

test-python: build $(VENV)/.ready
	$(PYTEST_SQLITE) $(PYTEST_SPLIT) tests/python tests/drills
	$(SERIAL_SQLITE)

# The API suite and the MongoDB differential test again with every roostd on
# a throwaway PostgreSQL (ROOST_TEST_ENGINE=postgresql; docs/ENGINES.md). The
# files left out test what only SQLite has (backups, page cache, plans),
# start no roostd, or put roostd on PostgreSQL whatever the engine
# (test_postgres_outage, test_pg_connections, test_cross_node*: `test-python` runs them).
ENGINE_SUITE = $(addprefix tests/python/,test_accounts.py test_access_matrix.py test_access_matrix_acl.py \
	test_write_path.py test_delta_sync.py test_delta_sync_edges.py test_delta_sync_etags.py test_live.py test_live_bounds.py \
	test_live_access.py test_webhooks.py test_files.py test_files_signed_url.py test_references.py test_mongo_semantics.py \
	test_mongo_seed_client.py test_session_revocation.py test_hostile_input.py test_hostile.py \
	test_hostile_engine.py test_held_creates.py test_feed_cost.py test_resolve_bounds.py \
	test_accounts_password_throttle.py test_accounts_signup_flood.py test_accounts_email.py test_accounts_idtoken.py test_accounts_anonymous.py test_accounts_2fa.py test_account_deletion.py test_accounts_apple.py test_console_accounts.py \
	test_private_counting.py test_query_plans.py test_list_index_plans.py test_geo_box_walk.py test_nearest_dense.py test_newcomer_fixes.py test_first_run.py test_scripts.py test_script_jobs.py test_script_refusals.py \
	test_push.py test_push_sync.py test_rules.py test_rules_builtin.py test_schemas.py test_runtime_collections.py test_console_fixes.py test_console_pages.py test_admin_users.py test_console_collections.py test_rules_oracle.py test_rules_push.py test_roles.py)

test-python-postgresql: build $(VENV)/.ready
	$(PYTEST_PG) $(PYTEST_SPLIT) $(ENGINE_SUITE)
	$(SERIAL_PG)

# The version the packages carry: RoostServer.version.
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/Roost/Server/RoostServer.swift)
DIST    := .build/dist

# A Debian package (dpkg-deb) and a tarball for other distributions, both from
# one build (the release build unless PACKAGE_FROM=debug); their runtime
# libraries: packaging/runtime-packages.
PACKAGE_FROM   ?= release
PACKAGE_BINARY  = .build/$(PACKAGE_FROM)/roostd

deb: $(if $(filter debug,$(PACKAGE_FROM)),build,release)
	sh packaging/build-deb.sh $(PACKAGE_BINARY) $(VERSION) $(DIST)

dist: $(if $(filter debug,$(PACKAGE_FROM)),build,release)
	sh packaging/build-dist.sh $(PACKAGE_BINARY) $(VERSION) $(DIST)

# Installs the .deb on this machine (root), starts roostd exactly as its unit
# would (ExecStart, Environment, User=roost, a socket as roostd.socket passes it,
# and no Swift toolchain in sight), upgrades, removes and purges it; then runs
# the tarball the same way. `make test` packages the debug build it already has
# (the same scripts, unit, runtime libraries and Swift runtime; a release build
# would add about 10 minutes on two cores): `make test-package` alone packages
# the release build.
test-package: deb dist $(VENV)/.ready
	ROOST_RELEASE_BINARY=$(CURDIR)/$(PACKAGE_BINARY) ROOST_VERSION=$(VERSION) \
	ROOST_DEB=$(CURDIR)/$(DIST)/roost_$(VERSION)_$$(dpkg --print-architecture).deb \
	ROOST_DIST=$(CURDIR)/$(DIST)/roost-$(VERSION)-linux-$$(uname -m).tar.gz \
	$(VENV)/bin/pytest -q tests/packaging

test-package-debug:
	$(MAKE) test-package PACKAGE_FROM=debug

# `make test` (CI): the build, the two parallel pytest parts one after the other (each keeps
# both cores busy), then SQLite's serial part (one test at a time, mostly waiting out
# throttles and timers) beside `swift test` (niced, so the serial tests' daemons come first)
# and the package test (tests/together.sh), then PostgreSQL's serial part alone. The Swift
# tests run as two processes, the RoostKit suite against a real roostd second: in one process
# the two cooperative threads of a two-core machine were shared with 420 other tests and the
# whole run took 340-390 s, against 150 s and 55 s apart. (29 Nov: with PostgreSQL's serial
# part, or part of SQLite's, in a lane of its own beside those, log-ins during the sign-up
# flood test took over 2.5 s when both engines' floods met; so PostgreSQL's serial part runs
# alone. The idle-connection limit test that also failed then was racing the listeners'
# accepts, and now waits for them.) Alone, the same parts are `make
# test-swift`, `test-python`, `test-python-postgresql` and `test-package-debug`.
SERIAL_SQLITE = $(PYTEST_SQLITE) -m serial tests/python tests/drills || [ $$? -eq 5 ]
SERIAL_PG     = $(PYTEST_PG) -m serial $(ENGINE_SUITE) || [ $$? -eq 5 ]
SWIFT_TESTS   = nice -n 10 swift test --skip-build --skip RoostKitIntegrationTests \
	&& nice -n 10 swift test --skip-build --filter RoostKitIntegrationTests

test: build $(VENV)/.ready
	swift build --build-tests
	$(PYTEST_SQLITE) $(PYTEST_SPLIT) tests/python tests/drills
	$(PYTEST_PG) $(PYTEST_SPLIT) $(ENGINE_SUITE)
	sh tests/together.sh "SQLite, serial part" '$(SERIAL_SQLITE)' \
	  "swift test, then the packages" '$(SWIFT_TESTS) && $(MAKE) test-package PACKAGE_FROM=debug'
	$(SERIAL_PG)

# Reliability drills (tests/drills, loopback only, about 6 minutes): kill -9 under
# load, a hostile-input corpus, slowloris, schemathesis. Each prints one summary
# line and appends it to RELIABILITY.md. CI runs them small in tests/drills/test_drills_*.py.
# tests/ holds the packages `drills` and `roost_harness` (the one test harness).
drills: build $(VENV)/.ready
	ROOSTD=$(CURDIR)/.build/debug/roostd PYTHONPATH=tests $(VENV)/bin/python -m drills.run_all

install: release
	install -D -m 0755 .build/release/roostd $(DESTDIR)/usr/local/bin/roostd
	install -D -m 0644 systemd/roostd.service $(DESTDIR)/etc/systemd/system/roostd.service
	install -D -m 0644 systemd/roostd.socket $(DESTDIR)/etc/systemd/system/roostd.socket
	install -D -m 0644 README.md $(DESTDIR)/usr/local/share/doc/roost/README.md
	install -D -m 0644 etc/roost/roost.yaml $(DESTDIR)/etc/roost/roost.yaml

clean:
	rm -rf .build $(VENV)

# The benchmarks' own tools (wrk drives the HTTP load; perf counts hand-offs, bench/wakeups.py).
bench-deps:
	@$(MAKE) -s deps APT_PACKAGES="wrk linux-perf"

bench: bench-deps $(VENV)/.ready
	bench/run.sh
	.venv/bin/python bench/live_fanout.py
	.venv/bin/python bench/push.py
	$(MAKE) bench-scale

# Live fan-out beside the writes (#43): 300 subscribers × 200 sequential creates vs PocketBase, creates with and
# without them, GET p99 beside 1,000 streams at 200 writes/s (docs/LIVE-FANOUT.md).
bench-live-fanout: release $(VENV)/.ready
	.venv/bin/python bench/live_fanout.py

# Direct push (#39): notifications/s to an APNs stand-in over one HTTP/2 connection, GET p99 meanwhile, silent-sync coalescing (docs/PUSH.md).
bench-push: release $(VENV)/.ready
	.venv/bin/python bench/push.py

# Access rules (#35): a list under a read rule vs shared, live fan-out with a per-subscriber rule vs none.
bench-rules: release $(VENV)/.ready
	.venv/bin/python bench/rules.py
	.venv/bin/python bench/rules_live.py

# Collections set up at run time (#36): creates under a 10-property schema; creates while an index builds on 300k documents.
bench-collections: release $(VENV)/.ready
	.venv/bin/python bench/runtime_collections.py

# ID-token sign-in vs password log-in rate; GET latency during 1,000 verification mails (#38; BENCHMARKS.md).
bench-accounts: release $(VENV)/.ready
	.venv/bin/python bench/accounts.py

# Query shapes at growing sizes on both engines, PocketBase in the same run (#22, #42; BENCHMARKS.md).
bench-scale: release $(VENV)/.ready
	.venv/bin/python bench/scale.py --engine postgresql --sizes 10000,100000,1000000
	.venv/bin/python bench/scale.py --engine sqlite --sizes 10000,100000,1000000
