package artifact_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/action/artifact"
	"github.com/loop-action/loop-action/internal/testing/artifactfake"
)

const (
	runID = "9b1f3c2e-5a4d-4e61-8f0a-2d7c9e1b6a30"
	jobID = "c0ffee00-1234-4abc-9def-0123456789ab"
	name  = "loop-success"
)

// setup starts a fake results service and a config that talks to it.
func setup(t *testing.T, opts ...artifactfake.Option) (*artifactfake.Server, artifact.Config) {
	t.Helper()
	srv := artifactfake.New(opts...)
	t.Cleanup(srv.Close)
	return srv, artifact.Config{
		ResultsURL:   srv.URL() + "some/path?ignored=1",
		RuntimeToken: srv.Token(runID, jobID),
		ServerURL:    "https://github.com/",
		Repository:   "octo/loop",
		RunID:        "42",
		BlockSize:    64 << 10,
		Backoff:      time.Millisecond,
	}
}

// writeFiles writes files (path → content) under dir, making directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func smallDir(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"SKILL.md": "# skill\n", "out/a.txt": "a\n"})
	return dir
}

// unzip maps each entry of a zip to the SHA-256 of its content, or to
// "dir" for a directory entry.
func unzip(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("artifact is not a zip: %v", err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			got[f.Name] = "dir"
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("read %q: %v", f.Name, err)
		}
		got[f.Name] = hex.EncodeToString(h.Sum(nil))
	}
	return got
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestUploadTree(t *testing.T) {
	t.Parallel()
	srv, cfg := setup(t)
	cfg.BlockSize = 4 << 20
	dir := t.TempDir()
	big := make([]byte, 20<<20)
	rand.NewChaCha8([32]byte{1}).Read(big) // incompressible: the zip spans 6 blocks
	files := map[string]string{
		"SKILL.md":             "# skill\n",
		"out/report/data.json": `{"ok":true}`,
	}
	writeFiles(t, dir, files)
	mustDo(t, os.WriteFile(filepath.Join(dir, "out", "big.bin"), big, 0o644))
	mustDo(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	mustDo(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	mustDo(t, os.Mkdir(filepath.Join(dir, "onlylinks"), 0o755))
	mustDo(t, os.Symlink("SKILL.md", filepath.Join(dir, "link.md")))
	mustDo(t, os.Symlink("report", filepath.Join(dir, "out", "linkdir")))
	mustDo(t, os.Symlink("/etc/passwd", filepath.Join(dir, "onlylinks", "passwd")))

	res, err := artifact.Upload(t.Context(), cfg, name, dir)
	if err != nil {
		t.Fatal(err)
	}

	data, ok := srv.Artifact(name)
	if !ok {
		t.Fatalf("the fake has no finalized artifact %q", name)
	}
	want := map[string]string{
		"SKILL.md":             digest([]byte(files["SKILL.md"])),
		"out/report/data.json": digest([]byte(files["out/report/data.json"])),
		"out/big.bin":          digest(big),
		"run.sh":               digest([]byte("#!/bin/sh\n")),
		"empty/":               "dir",
		"onlylinks/":           "dir",
	}
	if diff := cmp.Diff(want, unzip(t, data)); diff != "" {
		t.Errorf("zip entries (-want +got):\n%s", diff)
	}
	rec, _ := srv.Record(name)
	wantRes := artifact.Result{
		ID:     rec.ID,
		Name:   name,
		Size:   int64(len(data)),
		SHA256: digest(data),
		URL:    fmt.Sprintf("https://github.com/octo/loop/actions/runs/42/artifacts/%d", rec.ID),
	}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	wantRec := artifactfake.Record{
		ID: rec.ID, RunID: runID, JobID: jobID, Name: name, ContentType: "zip",
		Size: int64(len(data)), Hash: "sha256:" + digest(data), Finalized: true,
	}
	if diff := cmp.Diff(wantRec, rec); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	blocks := (len(data) + cfg.BlockSize - 1) / cfg.BlockSize
	if got := srv.Calls(artifactfake.Block); got != blocks || blocks < 6 {
		t.Errorf("%d Put Block calls for a %d-byte zip in blocks of %d", got, len(data), cfg.BlockSize)
	}
	checkMode(t, data, "run.sh", 0o755)
}

func checkMode(t *testing.T, data []byte, rel string, want os.FileMode) {
	t.Helper()
	zr, _ := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	for _, f := range zr.File {
		if f.Name == rel && f.Mode().Perm() != want {
			t.Errorf("%s has mode %v in the zip, want %v", rel, f.Mode().Perm(), want)
		}
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestUploadEmptyDir(t *testing.T) {
	t.Parallel()
	srv, cfg := setup(t)
	if _, err := artifact.Upload(t.Context(), cfg, name, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	data, _ := srv.Artifact(name)
	if diff := cmp.Diff(map[string]string{}, unzip(t, data)); diff != "" {
		t.Errorf("zip entries (-want +got):\n%s", diff)
	}
}

func TestUploadDuplicateName(t *testing.T) {
	t.Parallel()
	_, cfg := setup(t)
	if _, err := artifact.Upload(t.Context(), cfg, name, smallDir(t)); err != nil {
		t.Fatal(err)
	}
	_, err := artifact.Upload(t.Context(), cfg, name, smallDir(t))
	checkErr(t, err, cfg.RuntimeToken, artifact.ErrExists, `create artifact "loop-success": an artifact with this name already exists`)
}

func TestUploadCamelCase(t *testing.T) {
	t.Parallel()
	srv, cfg := setup(t, artifactfake.CamelCase())
	res, err := artifact.Upload(t.Context(), cfg, name, smallDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := srv.Record(name); res.ID != rec.ID || !rec.Finalized {
		t.Errorf("result id %d, fake's record %+v", res.ID, rec)
	}
}

func TestUploadRetention(t *testing.T) {
	t.Parallel()
	srv, cfg := setup(t)
	cfg.RetentionDays = 7
	before := time.Now().Truncate(time.Second)
	if _, err := artifact.Upload(t.Context(), cfg, name, smallDir(t)); err != nil {
		t.Fatal(err)
	}
	rec, _ := srv.Record(name)
	lo, hi := before.AddDate(0, 0, 7), time.Now().AddDate(0, 0, 7)
	if rec.ExpiresAt.Before(lo) || rec.ExpiresAt.After(hi) {
		t.Errorf("expires_at %v, want between %v and %v", rec.ExpiresAt, lo, hi)
	}
}

func TestUploadBadTree(t *testing.T) {
	t.Parallel()
	srv, cfg := setup(t)
	colon := t.TempDir()
	writeFiles(t, colon, map[string]string{"out/a:b.txt": "x"})
	link := filepath.Join(t.TempDir(), "link")
	mustDo(t, os.Symlink(smallDir(t), link))
	for dir, want := range map[string]string{
		colon:                      `path "out/a:b.txt" contains ":"`,
		link:                       "is not a directory",
		filepath.Join(colon, "no"): "no such file or directory",
	} {
		_, err := artifact.Upload(t.Context(), cfg, name, dir)
		checkErr(t, err, cfg.RuntimeToken, nil, want)
	}
	if got := srv.Calls(artifactfake.Create); got != 0 {
		t.Errorf("%d create calls for trees that cannot be uploaded", got)
	}
}
