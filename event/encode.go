package event

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// MarshalJSON encodes the event byte for byte as encoding/json would. Filter
// and Score events carry a row per node checked, which on a big cluster is
// most of the stream's bytes and most of its encoding time: they are written
// here by hand, without reflection, several times faster. Every other kind
// goes through encoding/json. TestMarshalJSONMatchesEncodingJSON holds the
// two to the same bytes.
func (e *Event) MarshalJSON() ([]byte, error) {
	if !e.matrixOnly() {
		type plain Event // the same fields without this method
		return json.Marshal((*plain)(e))
	}
	b := make([]byte, 0, e.matrixSize())
	b = strconv.AppendUint(append(b, `{"seq":`...), e.Seq, 10)
	b = append(b, `,"time":`...)
	var err error
	if b, err = appendTime(b, e.Time); err != nil {
		return nil, err
	}
	b = appendString(append(b, `,"kind":`...), string(e.Kind))
	if p := e.Pod; p != nil {
		b = appendString(append(b, `,"pod":{"namespace":`...), p.Namespace)
		b = appendString(append(b, `,"name":`...), p.Name)
		b = appendString(append(b, `,"uid":`...), p.UID)
		b = append(b, '}')
	}
	if e.Cycle != 0 {
		b = strconv.AppendInt(append(b, `,"cycle":`...), e.Cycle, 10)
	}
	if e.Filter != nil {
		b = e.Filter.appendJSON(append(b, `,"filter":`...))
	} else {
		b = e.Score.appendJSON(append(b, `,"score":`...))
	}
	return append(b, '}'), nil
}

// matrixOnly reports whether e is a Filter or Score event with no other
// payload, the shape the hand-written encoder covers.
func (e *Event) matrixOnly() bool {
	if (e.Filter == nil) == (e.Score == nil) {
		return false
	}
	return e.Queue == nil && e.CycleStart == nil && e.Point == nil && e.CycleEnd == nil &&
		e.PermitWait == nil && e.BindingEnd == nil && e.Node == nil && e.PodChange == nil &&
		e.Scheduler == nil && e.Scenario == nil && e.Preemption == nil && e.Extender == nil && e.Summary == nil
}

// matrixSize estimates a matrix event's encoding from the keys of a row and
// numbers of four digits, so that it is written into one allocation which
// the history then keeps without much unused room.
func (e *Event) matrixSize() int {
	n := 256
	if f := e.Filter; f != nil {
		for i, name := range f.NodeNames {
			n += 40 + len(name) + len(f.Reasons[i])
		}
		return n + 8*len(f.Codes)
	}
	for i := range e.Score.Plugins {
		n += 64 + len(e.Score.Plugins[i].Name) + len(e.Score.Plugins[i].Reason)
	}
	for _, name := range e.Score.NodeNames {
		n += 72 + len(name) + 20*len(e.Score.Plugins)
	}
	return n
}

func appendTime(b []byte, t time.Time) ([]byte, error) {
	enc, err := t.MarshalJSON() // errors, as encoding/json does, on years it cannot write
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// appendList writes a list as encoding/json does: null when nil, each item
// as item writes it.
func appendList[T any](b []byte, list []T, item func([]byte, T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, v)
	}
	return append(b, ']')
}

// appendNumbers writes a list of integers.
func appendNumbers[T int8 | int | int64](b []byte, list []T) []byte {
	return appendList(b, list, func(b []byte, v T) []byte { return strconv.AppendInt(b, int64(v), 10) })
}

// appendString quotes s. Node and plugin names are plain ASCII and are
// copied as they are; anything encoding/json would escape (quotes, control
// characters, <, > and &, non-ASCII) goes through encoding/json itself, so
// the bytes stay the same.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string always encodes
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
