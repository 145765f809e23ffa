package export

import "github.com/loop-action/loop-action/internal/secret"

// heldBy names the secret a file holds, for a Withheld reason.
func heldBy(name string) string { return "it " + secret.Holds(name) }
