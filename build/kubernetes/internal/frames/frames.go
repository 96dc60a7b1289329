// Package frames is the protocol of ksview serve's Go helpers (ksview-protojson,
// ksview-gotemplate): on stdin and stdout, one request at a time, in order, a frame is a 4-byte
// big-endian length and that many bytes. The TypeScript side is src/kube/framed-process.ts.
package frames

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// ErrorAnswer is the answer {"error": "<message>"}.
func ErrorAnswer(err error) []byte {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return b
}

// Serve answers each request frame read from in with handle's answer, written to out, until EOF
// on in (nil) or a broken stream (its error). A request over max bytes is skipped, unread, and
// answered with an ErrorAnswer, so one oversized request never ends the helper.
func Serve(in io.Reader, out io.Writer, max uint32, handle func([]byte) []byte) error {
	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriterSize(out, 1<<16)
	for {
		var n uint32
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		var answer []byte
		if n > max {
			if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
				return err
			}
			answer = ErrorAnswer(fmt.Errorf("request of %d bytes is over the limit of %d", n, max))
		} else {
			body := make([]byte, n)
			if _, err := io.ReadFull(r, body); err != nil {
				return err
			}
			answer = handle(body)
		}
		if err := binary.Write(w, binary.BigEndian, uint32(len(answer))); err != nil {
			return err
		}
		if _, err := w.Write(answer); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}
