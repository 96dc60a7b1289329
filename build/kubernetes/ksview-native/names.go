package main

// The name a denatured object is stored under in the WDS, as ksview serve computes it
// (src/storage/denatured-translation.ts, storedName): the native name when it is a DNS-1123
// subdomain not of the encoded form, else "kv-" and the first 40 hex digits of its SHA-256.

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
)

var encodedName = regexp.MustCompile(`^kv-[0-9a-f]{40}$`)

func storedName(native string) string {
	if len(validation.IsDNS1123Subdomain(native)) == 0 && !encodedName.MatchString(native) {
		return native
	}
	sum := sha256.Sum256([]byte(native))
	return "kv-" + hex.EncodeToString(sum[:])[:40]
}
