// Package resttest sends the requests of the tests that drive minisched's
// REST API, the way a client does: one place to build a request, send it
// and read its answer whole.
package resttest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Response is an answer, its body read.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Call sends method to url with body (of contentType, when given) and
// header; "Host" in header sets the request's Host. A request that cannot
// be sent fails the test.
func Call(t testing.TB, method, url, contentType string, body []byte, header map[string]string) Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return Send(t, req)
}

// Send sends a request built elsewhere and reads its answer.
func Send(t testing.TB, req *http.Request) Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL, err)
	}
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: data}
}
