#!/usr/bin/env bash
# A local PostgreSQL for regkb's tests (test/postgres/, test/helpers/postgres.ts), on a
# developer's machine or in CI: installs Debian's `postgresql` when missing, starts its
# cluster, and creates (idempotently) the role `regkb_test` with CREATEDB, which the tests
# use to create and drop one database per test file. Run it once as root (sudo); `.ci/run`
# does. Messages go to stderr; stdout is one line for the shell:
#   eval "$(sudo scripts/dev-postgres.sh)"   # exports REGKB_TEST_DATABASE_URL
# The role's password is a fixed, public test password (the tests' default URL uses it):
# the role can create databases and nothing else, and Debian's cluster accepts password
# logins from 127.0.0.1 and ::1 only. Never point REGKB_TEST_DATABASE_URL at a server that
# holds anything you care about.
set -euo pipefail

ROLE=regkb_test
PASSWORD=regkb_test_password

say() { echo "dev-postgres: $*" >&2; }

url_for() { echo "postgres://${ROLE}:${PASSWORD}@127.0.0.1:$1/postgres"; }

reachable() {
  command -v psql >/dev/null 2>&1 &&
    PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -p "$1" -U "$ROLE" -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1
}

# The first cluster pg_lsclusters lists: "version name port status ...".
first_cluster() { pg_lsclusters -h 2>/dev/null | head -n 1; }

if [ "$(id -u)" -ne 0 ]; then
  port=$(first_cluster | awk '{print $3}')
  port=${port:-5432}
  if reachable "$port"; then
    say "PostgreSQL on 127.0.0.1:$port already accepts $ROLE"
    echo "export REGKB_TEST_DATABASE_URL=$(url_for "$port")"
    exit 0
  fi
  say "installing or starting PostgreSQL and creating the test role needs root; run: sudo $0"
  exit 1
fi

if ! command -v pg_lsclusters >/dev/null 2>&1 || [ -z "$(first_cluster)" ]; then
  say "installing postgresql (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
fi

cluster=$(first_cluster)
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  say "creating cluster $version main"
  pg_createcluster "$version" main >&2
  cluster=$(first_cluster)
fi
read -r version name port status _ <<<"$cluster"

if [ "$status" != "online" ]; then
  say "starting cluster $version $name on port $port"
  pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start >&2
fi

# Creates the role, or resets its password and rights if it exists (a re-run repairs it).
su postgres -c "psql -p $port -d postgres -v ON_ERROR_STOP=1 -q" >&2 <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$ROLE') THEN
    CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD';
  ELSE
    ALTER ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD';
  END IF;
END
\$\$;
SQL

if ! reachable "$port"; then
  say "the cluster runs but $ROLE cannot log in over 127.0.0.1:$port; check pg_hba.conf allows scram-sha-256 from 127.0.0.1"
  exit 1
fi
say "ready: $ROLE on 127.0.0.1:$port"
echo "export REGKB_TEST_DATABASE_URL=$(url_for "$port")"
