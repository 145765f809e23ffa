package artifact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// resultsScope prefixes the scp entry that names the backend ids.
const resultsScope = "Actions.Results"

// BackendIDs reads the workflow run and job backend ids from the runtime
// token: its (unverified) JWT payload's space-separated scp claim holds
// "Actions.Results:<runID>:<jobID>". Errors never quote the token.
func BackendIDs(runtimeToken string) (runID, jobID string, err error) {
	if runtimeToken == "" {
		return "", "", errors.New("runtime token (ACTIONS_RUNTIME_TOKEN) is empty")
	}
	parts := strings.Split(runtimeToken, ".")
	if len(parts) != 3 {
		return "", "", fmt.Errorf("runtime token is not a JWT: %d dot-separated parts, want 3", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", "", errors.New("runtime token is not a JWT: its payload is not base64url")
	}
	var claims struct {
		Scp string `json:"scp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", "", errors.New("runtime token is not a JWT: its payload is not a JSON object with a string scp")
	}
	for _, scope := range strings.Fields(claims.Scp) {
		ids := strings.Split(scope, ":")
		if ids[0] != resultsScope {
			continue
		}
		if len(ids) != 3 || ids[1] == "" || ids[2] == "" {
			return "", "", fmt.Errorf("runtime token scope %s is malformed: want %s:<run>:<job>", resultsScope, resultsScope)
		}
		return ids[1], ids[2], nil
	}
	return "", "", fmt.Errorf("runtime token has no %s scope", resultsScope)
}

// invalidNameChars may not appear in an artifact name
// (upload-artifact's path-and-artifact-name-validation.ts).
const invalidNameChars = "\":<>|*?\r\n\\/"

// invalidPathChars may not appear in a path inside an artifact.
const invalidPathChars = "\":<>|*?\r\n"

// ValidName reports whether name may name an artifact: non-empty, and none
// of " : < > | * ? \r \n \ /.
func ValidName(name string) error {
	if name == "" {
		return errors.New("artifact name is empty")
	}
	if i := strings.IndexAny(name, invalidNameChars); i >= 0 {
		return fmt.Errorf("artifact name %q contains %q, which is not allowed (none of \" : < > | * ? \\r \\n \\ /)", name, name[i:i+1])
	}
	return nil
}

// validPath reports whether rel may be a path inside an artifact.
func validPath(rel string) error {
	if i := strings.IndexAny(rel, invalidPathChars); i >= 0 {
		return fmt.Errorf("path %q contains %q, which an artifact may not hold (none of \" : < > | * ? \\r \\n)", rel, rel[i:i+1])
	}
	return nil
}
