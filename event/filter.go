package event

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	fwk "k8s.io/kube-scheduler/framework"
)

// Len is the number of rows.
func (f *FilterResults) Len() int { return len(f.NodeNames) }

// Calls is row i's codes and timings, in the order of Plugins. They share
// the columns' memory.
func (f *FilterResults) Calls(i int) ([]int8, []int64) {
	from, to := f.start(i), f.Ends[i]
	return f.Codes[from:to:to], f.PluginNanos[from:to:to]
}

func (f *FilterResults) start(i int) int32 {
	if i == 0 {
		return 0
	}
	return f.Ends[i-1]
}

// FailedAt is the index of the plugin that stopped row i's node, or -1
// when it passed every plugin that ran: Filter stops at the first plugin
// that does not succeed, so only the last code can be one.
func (f *FilterResults) FailedAt(i int) int {
	codes, _ := f.Calls(i)
	if k := len(codes); k > 0 && codes[k-1] != int8(fwk.Success) {
		return k - 1
	}
	return -1
}

// Row is row i as JSON has it.
func (f *FilterResults) Row(i int) NodeFilter {
	codes, nanos := f.Calls(i)
	row := NodeFilter{Node: f.NodeNames[i], Codes: make([]int, len(codes)), Nanos: nanos, Reason: f.Reasons[i], Nominated: f.Nominated[i]}
	for j, c := range codes {
		row.Codes[j] = int(c)
	}
	return row
}

// Rows is every row as JSON has it (nil when NodeNames is).
func (f *FilterResults) Rows() []NodeFilter {
	if f.NodeNames == nil {
		return nil
	}
	rows := make([]NodeFilter, f.Len())
	for i := range rows {
		rows[i] = f.Row(i)
	}
	return rows
}

// appendJSON writes the run as rows, without making them.
func (f *FilterResults) appendJSON(b []byte) []byte {
	b = appendList(append(b, `{"plugins":`...), f.Plugins, appendString)
	if f.NodeNames == nil {
		b = append(b, `,"nodes":null`...)
	} else {
		b = append(b, `,"nodes":[`...)
		for i, name := range f.NodeNames {
			if i > 0 {
				b = append(b, ',')
			}
			codes, nanos := f.Calls(i)
			b = appendString(append(b, `{"node":`...), name)
			b = appendNumbers(append(b, `,"codes":`...), codes)
			b = appendNumbers(append(b, `,"nanos":`...), nanos)
			if f.Reasons[i] != "" {
				b = appendString(append(b, `,"reason":`...), f.Reasons[i])
			}
			if f.Nominated[i] {
				b = append(b, `,"nominated":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = strconv.AppendInt(append(b, `,"nanos":`...), f.Nanos, 10)
	if f.NominatedNode {
		b = append(b, `,"nominatedNode":true`...)
	}
	if f.Batch != "" {
		b = appendString(append(b, `,"batch":`...), f.Batch)
	}
	return append(b, '}')
}

// MarshalJSON writes the run as a row per node.
func (f *FilterResults) MarshalJSON() ([]byte, error) {
	return f.appendJSON(nil), nil
}

// filterRows is a Filter run as JSON has it.
type filterRows struct {
	Plugins       []string     `json:"plugins"`
	Nodes         []NodeFilter `json:"nodes"`
	Nanos         int64        `json:"nanos"`
	NominatedNode bool         `json:"nominatedNode,omitempty"`
	Batch         string       `json:"batch,omitempty"`
}

// UnmarshalJSON reads the rows MarshalJSON writes into columns.
func (f *FilterResults) UnmarshalJSON(data []byte) error {
	var in filterRows
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	out, err := FilterFrom(in.Plugins, in.Nodes)
	if err != nil {
		return err
	}
	out.Nanos, out.NominatedNode, out.Batch = in.Nanos, in.NominatedNode, in.Batch
	*f = *out
	return nil
}

// FilterFrom puts rows into columns. A row may not have more calls than
// there are plugins, nor a timing for each call but one.
func FilterFrom(plugins []string, rows []NodeFilter) (*FilterResults, error) {
	calls := 0
	for _, row := range rows {
		calls += len(row.Codes)
	}
	out := NewFilterResults(plugins, len(rows), calls)
	if rows == nil {
		out.NodeNames = nil
	}
	for i, row := range rows {
		if len(row.Codes) > len(plugins) || len(row.Nanos) != len(row.Codes) {
			return nil, fmt.Errorf("filter row %d (%s): %d codes and %d timings, want as many of each and at most one for each of %d plugins",
				i, row.Node, len(row.Codes), len(row.Nanos), len(plugins))
		}
		codes := make([]int8, len(row.Codes))
		for j, c := range row.Codes {
			if c < 0 || c > math.MaxInt8 {
				return nil, fmt.Errorf("filter row %d (%s): code %d is no framework code", i, row.Node, c)
			}
			codes[j] = int8(c)
		}
		out.AddRow(row.Node, codes, row.Nanos, row.Reason, row.Nominated)
	}
	return out, nil
}

// NewFilterResults makes an empty run of the plugins, with room for rows
// rows that make calls plugin calls in all: each column is one allocation.
func NewFilterResults(plugins []string, rows, calls int) *FilterResults {
	return &FilterResults{
		Plugins:     plugins,
		NodeNames:   make([]string, 0, rows),
		Ends:        make([]int32, 0, rows),
		Codes:       make([]int8, 0, calls),
		PluginNanos: make([]int64, 0, calls),
		Reasons:     make([]string, 0, rows),
		Nominated:   make([]bool, 0, rows),
	}
}

// AddRow appends a row, copying its codes and timings.
func (f *FilterResults) AddRow(node string, codes []int8, nanos []int64, reason string, nominated bool) {
	f.NodeNames = append(f.NodeNames, node)
	f.Codes = append(f.Codes, codes...)
	f.PluginNanos = append(f.PluginNanos, nanos...)
	f.Ends = append(f.Ends, int32(len(f.Codes)))
	f.Reasons = append(f.Reasons, reason)
	f.Nominated = append(f.Nominated, nominated)
}
