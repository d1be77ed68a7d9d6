// Command mlp trains the tiny MLP of examples/mlp/README.md with the Go binding: the same
// data, parameters and op calls in the same order as every other language's version, so
// its losses match theirs. It prints `step <t> loss <value>` per step and nothing else on
// standard output.
package main

import (
	"fmt"
	"os"

	"catalyst"
)

const (
	samples  = 64
	features = 4
	hidden   = 16
	classes  = 3
	steps    = 50
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(1)
	}
}

// closer collects handles to close when run returns.
type closer []interface{ Close() error }

func (c *closer) add(t *catalyst.Tensor, err error) (*catalyst.Tensor, error) {
	if err == nil {
		*c = append(*c, t)
	}
	return t, err
}

func (c closer) closeAll() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i].Close()
	}
}

func run() error {
	rt, err := catalyst.NewRuntime(nil)
	if err != nil {
		return err
	}
	defer rt.Close()
	dev, err := rt.DefaultDevice()
	if err != nil {
		return err
	}
	defer dev.Close()
	var keep closer
	defer func() { keep.closeAll() }()

	// The data: k = (7i + 3j) mod 13, x = k / 6.5 - 1 in double, rounded to f32.
	xData := make([]float32, samples*features)
	yData := make([]int32, samples)
	for i := 0; i < samples; i++ {
		for j := 0; j < features; j++ {
			k := (7*i + 3*j) % 13
			xData[i*features+j] = float32(float64(k)/6.5 - 1.0)
		}
		yData[i] = int32(((7*i)%13 + (7*i+9)%13) % 3)
	}
	x, err := keep.add(catalyst.FromSlice(dev, []int64{samples, features}, xData))
	if err != nil {
		return err
	}
	y, err := keep.add(catalyst.FromSlice(dev, []int64{samples}, yData))
	if err != nil {
		return err
	}

	// The parameters, in the order the optimizer visits them: w1, b1, w2, b2.
	w1Data := make([]float32, features*hidden)
	for r := 0; r < features; r++ {
		for c := 0; c < hidden; c++ {
			w1Data[r*hidden+c] = float32(float64((37*(hidden*r+c))%101)/101.0*0.8 - 0.4)
		}
	}
	w2Data := make([]float32, hidden*classes)
	for r := 0; r < hidden; r++ {
		for c := 0; c < classes; c++ {
			w2Data[r*classes+c] = float32(float64((53*(classes*r+c))%97)/97.0*0.8 - 0.4)
		}
	}
	w1, err := keep.add(catalyst.FromSlice(dev, []int64{features, hidden}, w1Data))
	if err != nil {
		return err
	}
	b1, err := keep.add(catalyst.Zeros(dev, catalyst.F32, []int64{hidden}))
	if err != nil {
		return err
	}
	w2, err := keep.add(catalyst.FromSlice(dev, []int64{hidden, classes}, w2Data))
	if err != nil {
		return err
	}
	b2, err := keep.add(catalyst.Zeros(dev, catalyst.F32, []int64{classes}))
	if err != nil {
		return err
	}
	params := []*catalyst.Tensor{w1, b1, w2, b2}
	expAvg := make([]*catalyst.Tensor, len(params))
	expAvgSq := make([]*catalyst.Tensor, len(params))
	for i, p := range params {
		if err := p.SetRequiresGrad(true); err != nil {
			return err
		}
		if expAvg[i], err = keep.add(catalyst.Zeros(dev, catalyst.F32, p.Shape())); err != nil {
			return err
		}
		if expAvgSq[i], err = keep.add(catalyst.Zeros(dev, catalyst.F32, p.Shape())); err != nil {
			return err
		}
	}

	for t := 1; t <= steps; t++ {
		loss, err := forward(x, y, w1, b1, w2, b2)
		if err != nil {
			return err
		}
		value, err := catalyst.ToSlice[float32](loss)
		if err != nil {
			return err
		}
		if err := loss.Backward(); err != nil {
			return err
		}
		loss.Close()
		attrs := &catalyst.AdamWAttrs{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Step: uint64(t)}
		for i, p := range params {
			grad, err := p.Grad()
			if err != nil {
				return err
			}
			err = catalyst.OpRunInto(catalyst.OpAdamWStep, []*catalyst.Tensor{grad}, attrs,
				[]*catalyst.Tensor{p, expAvg[i], expAvgSq[i]})
			grad.Close()
			if err != nil {
				return err
			}
		}
		for _, p := range params {
			if err := p.ZeroGrad(); err != nil {
				return err
			}
		}
		fmt.Printf("step %d loss %.9g\n", t, value[0])
	}
	return nil
}

// forward is cross_entropy(relu(x @ w1 + b1) @ w2 + b2, y) with the mean reduction.
func forward(x, y, w1, b1, w2, b2 *catalyst.Tensor) (*catalyst.Tensor, error) {
	var tmp closer
	defer func() { tmp.closeAll() }()
	xw1, err := tmp.add(catalyst.Matmul(x, w1))
	if err != nil {
		return nil, err
	}
	pre, err := tmp.add(catalyst.Add(xw1, b1))
	if err != nil {
		return nil, err
	}
	h, err := tmp.add(catalyst.Relu(pre))
	if err != nil {
		return nil, err
	}
	hw2, err := tmp.add(catalyst.Matmul(h, w2))
	if err != nil {
		return nil, err
	}
	logits, err := tmp.add(catalyst.Add(hw2, b2))
	if err != nil {
		return nil, err
	}
	return catalyst.OpRun1(catalyst.OpCrossEntropy, []*catalyst.Tensor{logits, y},
		&catalyst.CrossEntropyAttrs{Reduction: catalyst.ReductionMean})
}
