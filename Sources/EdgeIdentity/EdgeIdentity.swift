// Module `EdgeIdentity`: see README's architecture section.
