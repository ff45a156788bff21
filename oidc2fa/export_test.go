package oidc2fa

// KeyRingTenantsInMemory returns how many tenants' keys r holds in memory.
func KeyRingTenantsInMemory(r *KeyRing) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tenants)
}
