package delivery

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/workspace"
)

// TestBlobIsCheckedAgainstItsID: a blob reads back as stored, and a store
// that holds other content under a blob's id (the loop root's object
// store is writable by the agents) is an error, never the other content.
func TestBlobIsCheckedAgainstItsID(t *testing.T) {
	t.Parallel()
	st := memory.NewStorage()
	put := func(content string) plumbing.EncodedObject {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		w.Close()
		return obj
	}
	good := put("the file\n")
	h, err := st.SetEncodedObject(good)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := workspace.ReadBlob(st, h); err != nil || string(got) != "the file\n" {
		t.Fatalf("blob = %q, %v; want the file", got, err)
	}
	st.ObjectStorage.Objects[h] = put("swapped in\n")
	if got, err := workspace.ReadBlob(st, h); err == nil || !strings.Contains(err.Error(), "other content") {
		t.Errorf("blob of a swapped object = %q, %v; want an error", got, err)
	}
}
