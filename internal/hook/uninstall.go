package hook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
)

// Uninstall removes the shim of hook, and only a shim install wrote, and
// puts back the hook that was there before it (chained or backed up).
func (r *Repo) Uninstall(ctx context.Context, hook string) (string, error) {
	if !slices.Contains(Hooks, hook) {
		return "", fmt.Errorf("uninstall: unknown hook %q", hook)
	}
	path, err := r.hookPath(ctx, hook)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("uninstall: no %s hook at %s", hook, path)
	}
	if !isShim(path) {
		return "", fmt.Errorf("uninstall: %s is a hook loop-action did not install: left alone", path)
	}
	if err := os.Remove(path); err != nil {
		return "", fmt.Errorf("uninstall: %w", err)
	}
	for _, suffix := range []string{chainedSuffix, backupSuffix} {
		if _, err := os.Lstat(path + suffix); err != nil {
			continue
		}
		if err := os.Rename(path+suffix, path); err != nil {
			return "", fmt.Errorf("uninstall: removed %s but could not put back %s: %w", path, path+suffix, err)
		}
		return fmt.Sprintf("removed %s and put back the hook that was there before", path), nil
	}
	return fmt.Sprintf("removed %s", path), nil
}

// HookStatus is what status says about one hook.
type HookStatus struct {
	Hook    string `json:"hook"`
	Path    string `json:"path"`
	State   string `json:"state"` // "installed", "absent" or "other" (a hook loop-action did not install)
	Mode    string `json:"mode,omitempty"`
	Chained string `json:"chained,omitempty"` // the hook run first, if any
	Backup  string `json:"backup,omitempty"`  // the hook --force replaced, if any
}

// Status reports every hook loop-action can install.
func (r *Repo) Status(ctx context.Context) ([]HookStatus, error) {
	out := make([]HookStatus, 0, len(Hooks))
	for _, h := range Hooks {
		path, err := r.hookPath(ctx, h)
		if err != nil {
			return nil, err
		}
		s := HookStatus{Hook: h, Path: path, State: "absent"}
		if _, err := os.Lstat(path); err == nil {
			s.State = "other"
		}
		if _, mode, ok := shimInfo(path); ok {
			s.State, s.Mode = "installed", mode
		}
		if _, err := os.Lstat(path + chainedSuffix); err == nil {
			s.Chained = path + chainedSuffix
		}
		if _, err := os.Lstat(path + backupSuffix); err == nil {
			s.Backup = path + backupSuffix
		}
		out = append(out, s)
	}
	return out, nil
}
