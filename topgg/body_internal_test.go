package topgg

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body whose length the server announced is read into one buffer of that
// size (what a careful hand-written client does), not grown as io.ReadAll grows.
func TestBodyReadIntoOneBufferOfItsContentLength(t *testing.T) {
	body := strings.Repeat(`{"voted":1}`, 1000)
	data, err := readAll(&http.Response{ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body))})
	require.NoError(t, err)
	assert.Equal(t, body, string(data))
	assert.Equal(t, len(body), cap(data), "one buffer of the announced size")

	_, err = readAll(&http.Response{ContentLength: int64(len(body)) + 1, Body: io.NopCloser(strings.NewReader(body))})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a body shorter than announced")

	data, err = readAll(&http.Response{ContentLength: -1, Body: io.NopCloser(bytes.NewReader([]byte(body)))})
	require.NoError(t, err)
	assert.Equal(t, body, string(data), "a body of unknown length is read whole")
}
