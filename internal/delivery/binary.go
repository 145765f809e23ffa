package delivery

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
)

// writeBinary writes a binary file's change as `git diff --binary` does:
// "GIT binary patch", the new content as a literal, then the old one
// (the reverse patch), each deflated and in git's base85 lines.
func writeBinary(b *bytes.Buffer, old, new []byte) error {
	b.WriteString("GIT binary patch\n")
	for _, data := range [][]byte{new, old} {
		if err := writeLiteral(b, data); err != nil {
			return err
		}
	}
	return nil
}

// writeLiteral writes "literal N" and data deflated, in lines of up to 52
// bytes, each led by its length ('A'–'Z' for 1–26, 'a'–'z' for 27–52),
// then an empty line.
func writeLiteral(b *bytes.Buffer, data []byte) error {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Fprintf(b, "literal %d\n", len(data))
	for rest := z.Bytes(); len(rest) > 0; {
		n := min(len(rest), 52)
		if n <= 26 {
			b.WriteByte(byte('A' + n - 1))
		} else {
			b.WriteByte(byte('a' + n - 27))
		}
		encode85(b, rest[:n])
		b.WriteByte('\n')
		rest = rest[n:]
	}
	b.WriteByte('\n')
	return nil
}

// base85 is git's alphabet (not Ascii85's).
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// encode85 writes data, padded with zeros to a multiple of 4 bytes, as 5
// characters for every 4 bytes, the most significant first.
func encode85(b *bytes.Buffer, data []byte) {
	for len(data) > 0 {
		var group [4]byte
		n := copy(group[:], data)
		data = data[n:]
		v := binary.BigEndian.Uint32(group[:])
		var out [5]byte
		for i := 4; i >= 0; i-- {
			out[i] = base85[v%85]
			v /= 85
		}
		b.Write(out[:])
	}
}
