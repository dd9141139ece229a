package kubeclient

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestJSONFramesReturnOneDocumentPerRead(t *testing.T) {
	reset := errors.New("connection reset by peer")
	tests := map[string]struct {
		stream io.Reader
		buffer int
		// want lists each Read's data and error, in order.
		want []frameRead
	}{
		"documents one per line": {
			stream: strings.NewReader("{\"type\":\"ADDED\"}\n{\"type\":\"MODIFIED\",\"object\":{\"a\":[1,2]}}\n"),
			buffer: 64,
			want:   []frameRead{{data: `{"type":"ADDED"}`}, {data: `{"type":"MODIFIED","object":{"a":[1,2]}}`}, {err: io.EOF}},
		},
		"documents split across the connection's reads": {
			stream: iotest.OneByteReader(strings.NewReader(`{"a":"x"} {"b":{"c":null}}`)),
			buffer: 64,
			want:   []frameRead{{data: `{"a":"x"}`}, {data: `{"b":{"c":null}}`}, {err: io.EOF}},
		},
		"a document larger than the buffer comes over several reads": {
			stream: strings.NewReader(`{"name":"abcdefgh"} {"b":1}`),
			buffer: 8,
			want: []frameRead{
				{data: `{"name":`, err: io.ErrShortBuffer}, {data: `"abcdefg`, err: io.ErrShortBuffer},
				{data: `h"}`}, {data: `{"b":1}`}, {err: io.EOF},
			},
		},
		"a stream cut inside a document": {
			stream: strings.NewReader(`{"a":1} {"b":`),
			buffer: 64,
			want:   []frameRead{{data: `{"a":1}`}, {err: io.ErrUnexpectedEOF}},
		},
		"the connection's error is the one reported": {
			stream: io.MultiReader(strings.NewReader(`{"a":1} {"b"`), iotest.ErrReader(reset)),
			buffer: 64,
			want:   []frameRead{{data: `{"a":1}`}, {err: reset}},
		},
		"a repeated name and invalid UTF-8 pass as the API machinery passes them": {
			stream: strings.NewReader("{\"a\":1,\"a\":\"\xff\"}"),
			buffer: 64,
			want:   []frameRead{{data: "{\"a\":1,\"a\":\"\xff\"}"}, {err: io.EOF}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			frames := jsonFramer{}.NewFrameReader(io.NopCloser(tc.stream))
			for i, want := range tc.want {
				buf := make([]byte, tc.buffer)
				n, err := frames.Read(buf)
				if got := string(buf[:n]); got != want.data || !errors.Is(err, want.err) || (want.err == nil) != (err == nil) {
					t.Fatalf("read %d: %q, %v; want %q, %v", i, got, err, want.data, want.err)
				}
			}
		})
	}
}

type frameRead struct {
	data string
	err  error
}
