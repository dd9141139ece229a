package kubeclient

import (
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// jsonFramer splits a watch stream into its JSON documents in one pass;
// the API machinery's framer reads each twice (encoding/json's Decoder
// scans the value, then skips through it again to copy it out).
type jsonFramer struct{}

func (jsonFramer) NewFrameWriter(w io.Writer) io.Writer { return w }

func (jsonFramer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	source := &readErrors{r: r}
	return &jsonFrames{
		closer:  r,
		source:  source,
		decoder: jsontext.NewDecoder(source, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)),
	}
}

// jsonFrames returns one JSON document per Read, as the API machinery's
// framer does: a document larger than the buffer comes over several
// Reads, all but the last answering io.ErrShortBuffer.
type jsonFrames struct {
	closer    io.Closer
	source    *readErrors
	decoder   *jsontext.Decoder
	remaining []byte
}

func (f *jsonFrames) Read(p []byte) (int, error) {
	if len(f.remaining) > 0 {
		n := copy(p, f.remaining)
		f.remaining = f.remaining[n:]
		if len(f.remaining) > 0 {
			return n, io.ErrShortBuffer
		}
		f.remaining = nil
		return n, nil
	}
	value, err := f.decoder.ReadValue()
	if err != nil {
		return 0, f.source.cause(err)
	}
	n := copy(p, value)
	if n < len(value) {
		// value is the decoder's until the next ReadValue.
		f.remaining = append([]byte(nil), value[n:]...)
		return n, io.ErrShortBuffer
	}
	return n, nil
}

func (f *jsonFrames) Close() error { return f.closer.Close() }

// readErrors remembers the error its reader last returned, so that the
// watch sees the connection's own error (io.EOF for a stream that ended,
// a reset, a timeout) as it would from the API machinery's framer, not
// the decoder's wrapping of it.
type readErrors struct {
	r   io.Reader
	err error
}

func (r *readErrors) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil {
		r.err = err
	}
	return n, err
}

// cause returns the error to report for the decoder's err.
func (r *readErrors) cause(err error) error {
	switch {
	case err == io.EOF:
		return io.EOF // the stream ended between documents
	case errors.Is(err, io.ErrUnexpectedEOF):
		return io.ErrUnexpectedEOF // it ended inside one
	case r.err != nil && r.err != io.EOF:
		return r.err
	}
	return err
}
