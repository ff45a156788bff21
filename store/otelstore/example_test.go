package otelstore_test

import (
	"context"
	"errors"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/otelstore"
)

// ExampleWrap times the calls of a memstore backend; a host passes its own meter provider, such
// as one with the Prometheus exporter.
func ExampleWrap() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	b, err := otelstore.Wrap(memstore.New().Backend(), otelstore.Config{MeterProvider: mp})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = b.Tenants.Create(ctx, store.Tenant{ID: "acme"})
	_, err = b.Tenants.Get(ctx, "globex")
	fmt.Println(errors.Is(err, store.ErrNotFound))

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, p := range rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints {
		op, _ := p.Attributes.Value("db.operation.name")
		kind, _ := p.Attributes.Value("error.type")
		fmt.Printf("%s %s error.type=%q count=%d\n", rm.ScopeMetrics[0].Metrics[0].Name, op.AsString(), kind.AsString(), p.Count)
	}
	// Unordered output:
	// true
	// db.client.operation.duration tenants.create error.type="" count=1
	// db.client.operation.duration tenants.get error.type="not_found" count=1
}
