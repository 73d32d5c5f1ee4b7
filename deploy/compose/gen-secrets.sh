#!/usr/bin/env bash
# Makes the local secrets of deploy/compose: a CA, a server certificate shared by the three NATS
# nodes (SANs nats-1, nats-2, nats-3, localhost, 127.0.0.1) and a client certificate for the
# Vitrine processes (NATS requires one: verify: true), one nkey pair per NATS role (relay,
# origin, edge, leaf, admin: deploy/nats/vitrine-accounts.conf), and .env with the roles' public
# keys, the server and edge secrets and the PostgreSQL password.
#
#   deploy/compose/gen-secrets.sh [--force] [DIR]
#
# DIR defaults to the script's directory (deploy/compose): secrets go to DIR/secrets/, the
# environment to DIR/.env. Existing files are kept unless --force. Needs openssl (1.1.1 or newer:
# Ed25519) and python3 (standard library only: the nkey encoding).
#
# For local use only: the private keys are readable by every user of this machine (mode 0644)
# because the containers run as uid 65532 and compose mounts the files as they are; the folder
# itself is 0700. A real deployment gets its certificates from its own CA and keeps each seed
# with its role only (deploy/README.md, "NATS is a trust boundary").
set -euo pipefail

force=0
if [[ "${1:-}" == "--force" ]]; then
	force=1
	shift
fi
dir="${1:-$(cd "$(dirname "$0")" && pwd)}"
sec="$dir/secrets"
if [[ -e "$dir/.env" && $force == 0 ]]; then
	echo "gen-secrets.sh: $dir/.env exists; --force makes everything anew" >&2
	exit 1
fi
for tool in openssl python3; do
	command -v "$tool" >/dev/null || { echo "gen-secrets.sh: $tool is required" >&2; exit 1; }
done
mkdir -p "$sec"
chmod 0700 "$sec"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# TLS: a CA, the NATS servers' certificate (also their route client certificate), the clients'.
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout "$sec/ca-key.pem" -out "$sec/nats-ca.pem" -days 825 \
	-subj "/CN=vitrine-compose-ca" -addext "basicConstraints=critical,CA:TRUE" \
	-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
sign() { # name, subject, extensions
	openssl req -new "${ec[@]}" -keyout "$sec/$1-key.pem" -out "$tmp/$1.csr" -subj "$2" 2>/dev/null
	printf '%b' "$3" >"$tmp/$1.ext"
	openssl x509 -req -in "$tmp/$1.csr" -CA "$sec/nats-ca.pem" -CAkey "$sec/ca-key.pem" \
		-CAcreateserial -CAserial "$tmp/ca.srl" -out "$sec/$1.pem" -days 825 -extfile "$tmp/$1.ext" 2>/dev/null
}
sign nats-server "/CN=nats" \
	"subjectAltName=DNS:nats-1,DNS:nats-2,DNS:nats-3,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature\n"
sign nats-client "/CN=vitrine" \
	"extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n"

# nkeys: an Ed25519 key pair per role from openssl, encoded as nkeys do (base32 without padding
# of prefix bytes, the key and a CRC-16/XMODEM, little-endian): the seed file (SU…) for the
# role's processes, the public key (U…) for the NATS servers.
declare -A pub
for role in relay origin edge leaf admin; do
	openssl genpkey -algorithm ed25519 -outform DER -out "$tmp/$role.der" 2>/dev/null
	openssl pkey -inform DER -in "$tmp/$role.der" -pubout -outform DER -out "$tmp/$role.pub.der" 2>/dev/null
	pub[$role]="$(python3 - "$tmp/$role.der" "$tmp/$role.pub.der" "$sec/nats-$role.nk" <<'PY'
import base64, struct, sys

def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc

def b32(raw):
    return base64.b32encode(raw + struct.pack("<H", crc16(raw))).decode().rstrip("=")

seed = open(sys.argv[1], "rb").read()[-32:]   # PKCS#8 DER: the 32-byte private key last
key = open(sys.argv[2], "rb").read()[-32:]    # SubjectPublicKeyInfo DER: the public key last
USER, SEED = 20 << 3, 18 << 3
open(sys.argv[3], "w").write(b32(bytes([SEED | USER >> 5, (USER & 31) << 3]) + seed) + "\n")
print(b32(bytes([USER]) + key))
PY
)"
done
chmod 0644 "$sec"/*.pem "$sec"/*.nk
chmod 0600 "$sec/ca-key.pem"

hex() { openssl rand -hex "$1"; }
umask 077
cat >"$dir/.env" <<EOF
# Made by gen-secrets.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ): local secrets, never commit.
# See .env.example for every knob.
COMPOSE_PROJECT_NAME=vitrine
POSTGRES_PASSWORD=$(hex 16)
VITRINE_SECRET=$(hex 32)
VITRINE_EDGE_SECRET=$(hex 32)
VITRINE_NATS_RELAY_NKEY=${pub[relay]}
VITRINE_NATS_ORIGIN_NKEY=${pub[origin]}
VITRINE_NATS_EDGE_NKEY=${pub[edge]}
VITRINE_NATS_LEAF_NKEY=${pub[leaf]}
VITRINE_NATS_ADMIN_NKEY=${pub[admin]}
EOF
echo "gen-secrets.sh: wrote $dir/.env and $sec/" >&2
