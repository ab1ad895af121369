package event

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// NewScoreResults makes the columns for a Score run of the plugins over n
// nodes, in one allocation.
func NewScoreResults(plugins []ScorePlugin, n int) *ScoreResults {
	k := len(plugins)
	cols := make([]int64, 3*k*n)
	return &ScoreResults{
		Plugins:     plugins,
		NodeNames:   make([]string, n),
		Raw:         cols[: k*n : k*n],
		Normalized:  cols[k*n : 2*k*n : 2*k*n],
		PluginNanos: cols[2*k*n:],
	}
}

// Len is the number of rows.
func (s *ScoreResults) Len() int { return len(s.NodeNames) }

// Reached reports whether Score reached row i's node before a plugin failed.
func (s *ScoreResults) Reached(i int) bool { return s.NodeNames[i] != "" }

// weigh is plugin j's weighted score for a normalized score v.
func (s *ScoreResults) weigh(j int, v int64) int64 { return v * s.Plugins[j].Weight }

// Total is row i's total: the sum of its weighted scores.
func (s *ScoreResults) Total(i int) int64 {
	if s.Normalized == nil {
		return 0
	}
	var total int64
	for j, v := range s.cells(s.Normalized, i) {
		total += s.weigh(j, v)
	}
	return total
}

// Row is row i as JSON has it. Its Raw, Normalized and Nanos share the
// columns' memory; Weighted is made.
func (s *ScoreResults) Row(i int) NodeScore {
	row := NodeScore{Node: s.NodeNames[i]}
	if !s.Reached(i) {
		return row
	}
	row.Raw, row.Nanos = s.cells(s.Raw, i), s.cells(s.PluginNanos, i)
	if s.Normalized != nil {
		row.Normalized = s.cells(s.Normalized, i)
		row.Weighted = make([]int64, len(row.Normalized))
		for j, v := range row.Normalized {
			row.Weighted[j] = s.weigh(j, v)
		}
		row.Total = s.Total(i)
	}
	return row
}

// Rows is every row as JSON has it (nil when NodeNames is).
func (s *ScoreResults) Rows() []NodeScore {
	if s.NodeNames == nil {
		return nil
	}
	rows := make([]NodeScore, s.Len())
	for i := range rows {
		rows[i] = s.Row(i)
	}
	return rows
}

// cells is row i's part of a column.
func (s *ScoreResults) cells(col []int64, i int) []int64 {
	k := len(s.Plugins)
	return col[i*k : (i+1)*k : (i+1)*k]
}

// appendJSON writes the run as rows, without making them.
func (s *ScoreResults) appendJSON(b []byte) []byte {
	b = appendList(append(b, `{"plugins":`...), s.Plugins, func(b []byte, p ScorePlugin) []byte {
		b = appendString(append(b, `{"name":`...), p.Name)
		b = strconv.AppendInt(append(b, `,"weight":`...), p.Weight, 10)
		if p.NormalizeNanos != 0 {
			b = strconv.AppendInt(append(b, `,"normalizeNanos":`...), p.NormalizeNanos, 10)
		}
		if p.Code != 0 {
			b = strconv.AppendInt(append(b, `,"code":`...), int64(p.Code), 10)
		}
		if p.Reason != "" {
			b = appendString(append(b, `,"reason":`...), p.Reason)
		}
		if p.Extender {
			b = append(b, `,"extender":true`...)
		}
		if p.Nanos != 0 {
			b = strconv.AppendInt(append(b, `,"nanos":`...), p.Nanos, 10)
		}
		return append(b, '}')
	})
	if s.NodeNames == nil {
		b = append(b, `,"nodes":null`...)
	} else {
		b = append(b, `,"nodes":[`...)
		for i, name := range s.NodeNames {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(append(b, `{"node":`...), name)
			if !s.Reached(i) {
				b = append(b, `,"raw":null,"normalized":null,"weighted":null,"nanos":null,"total":0}`...)
				continue
			}
			b = appendNumbers(append(b, `,"raw":`...), s.cells(s.Raw, i))
			if s.Normalized == nil {
				b = append(b, `,"normalized":null,"weighted":null`...)
			} else {
				normalized := s.cells(s.Normalized, i)
				b = appendNumbers(append(b, `,"normalized":`...), normalized)
				b = append(b, `,"weighted":[`...)
				for j, v := range normalized {
					if j > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendInt(b, s.weigh(j, v), 10)
				}
				b = append(b, ']')
			}
			b = appendNumbers(append(b, `,"nanos":`...), s.cells(s.PluginNanos, i))
			b = strconv.AppendInt(append(b, `,"total":`...), s.Total(i), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = strconv.AppendInt(append(b, `,"nanos":`...), s.Nanos, 10)
	if s.Batch != "" {
		b = appendString(append(b, `,"batch":`...), s.Batch)
	}
	return append(b, '}')
}

// MarshalJSON writes the run as a row per node.
func (s *ScoreResults) MarshalJSON() ([]byte, error) {
	return s.appendJSON(nil), nil
}

// scoreRows is a Score run as JSON has it.
type scoreRows struct {
	Plugins []ScorePlugin `json:"plugins"`
	Nodes   []NodeScore   `json:"nodes"`
	Nanos   int64         `json:"nanos"`
	Batch   string        `json:"batch,omitempty"`
}

// UnmarshalJSON reads the rows MarshalJSON writes into columns.
func (s *ScoreResults) UnmarshalJSON(data []byte) error {
	var in scoreRows
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	out, err := ScoreFrom(in.Plugins, in.Nodes)
	if err != nil {
		return err
	}
	out.Nanos, out.Batch = in.Nanos, in.Batch
	*s = *out
	return nil
}

// ScoreFrom puts rows into columns. Weighted scores and totals are made
// again from the normalized scores and the weights, so no row can disagree
// with them; every row reached must have a score for each plugin.
func ScoreFrom(plugins []ScorePlugin, rows []NodeScore) (*ScoreResults, error) {
	out := NewScoreResults(plugins, len(rows))
	if rows == nil {
		out.NodeNames = nil
	}
	k, normalized := len(plugins), 0
	for i, row := range rows {
		if row.Node == "" {
			if row.Raw != nil || row.Normalized != nil || row.Nanos != nil {
				return nil, fmt.Errorf("score row %d has scores but no node", i)
			}
			continue
		}
		out.NodeNames[i] = row.Node
		if len(row.Raw) != k || len(row.Nanos) != k {
			return nil, fmt.Errorf("score row %d (%s): %d raw scores and %d timings, want one for each of %d plugins", i, row.Node, len(row.Raw), len(row.Nanos), k)
		}
		copy(out.cells(out.Raw, i), row.Raw)
		copy(out.cells(out.PluginNanos, i), row.Nanos)
		if row.Normalized == nil {
			continue
		}
		if len(row.Normalized) != k {
			return nil, fmt.Errorf("score row %d (%s): %d normalized scores, want one for each of %d plugins", i, row.Node, len(row.Normalized), k)
		}
		copy(out.cells(out.Normalized, i), row.Normalized)
		normalized++
	}
	reached := 0
	for i := range out.NodeNames {
		if out.Reached(i) {
			reached++
		}
	}
	switch {
	case normalized == 0:
		out.Normalized = nil
	case normalized != reached || reached != out.Len():
		return nil, fmt.Errorf("score rows: %d of %d have normalized scores; a run normalizes every row or none", normalized, out.Len())
	}
	return out, nil
}
