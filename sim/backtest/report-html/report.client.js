// The report page's charts, run in the browser: reads the JSON in #chart-data (built by
// sim/backtest/report-html/data.ts) and draws it with TradingView Lightweight Charts, which the
// page carries inline (window.LightweightCharts). Drag to pan, wheel to zoom, hover for values.
// Times are unix seconds, shown in UTC; money arrives as micro-USDC.
;(function () {
  "use strict"
  var L = window.LightweightCharts
  var data = JSON.parse(document.getElementById("chart-data").textContent)
  var COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
  var usd = function (micro) { return micro / 1e6 }
  var fmt2 = function (x) { return x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) }
  var fmt0 = function (x) { return x.toLocaleString("en-US", { maximumFractionDigits: 0 }) }
  var USDC = { type: "price", precision: 2, minMove: 0.01 }
  var WHOLE = { type: "price", precision: 0, minMove: 1 }
  var pad = function (n) { return String(n).padStart(2, "0") }
  // Civil date of a unix day, as the rewards book labels days (src/service/rewards-book.ts dayLabel): no Date object.
  var dayLabel = function (day) {
    var z = day + 719468
    var era = Math.floor(z / 146097)
    var doe = z - era * 146097
    var yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
    var doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
    var mp = Math.floor((5 * doy + 2) / 153)
    var m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0)) + "-" + pad(m) + "-" + pad(doy - Math.floor((153 * mp + 2) / 5) + 1)
  }
  var hhmm = function (t) {
    var s = ((t % 86400) + 86400) % 86400
    return dayLabel(Math.floor(t / 86400)) + " " + pad(Math.floor(s / 3600)) + ":" + pad(Math.floor((s % 3600) / 60))
  }
  var utc = function (t) { return hhmm(t) + " UTC" }
  // Each chart and its series by id, for the fills table's times and for the browser tests.
  var charts = {}
  window.TwinbookReport = { utc: utc, utcSec: function (t) { return hhmm(t) + ":" + pad(((t % 60) + 60) % 60) }, charts: charts }

  var el = function (tag, cls, text) {
    var e = document.createElement(tag)
    if (cls) e.className = cls
    if (text !== undefined) e.textContent = text
    return e
  }

  // A chart in a box: title, a legend line (values under the cursor, or the last ones), the plot.
  var box = function (id, title, note) {
    var root = document.getElementById("charts")
    var section = el("section", "chart")
    section.id = id
    section.appendChild(el("h3", "", title))
    if (note) section.appendChild(el("p", "muted small", note))
    var legend = el("div", "legend")
    var plot = el("div", "plot")
    section.appendChild(legend)
    section.appendChild(plot)
    root.appendChild(section)
    var chart = L.createChart(plot, {
      autoSize: true,
      layout: { attributionLogo: false, background: { color: "#fcfcfc" }, textColor: "#444", fontSize: 11 },
      grid: { vertLines: { color: "#f0f0f0" }, horzLines: { color: "#eee" } },
      rightPriceScale: { borderColor: "#ddd" },
      leftPriceScale: { borderColor: "#ddd" },
      // minBarSpacing below the default lets fitContent show every sample of a long run at once.
      timeScale: { timeVisible: true, secondsVisible: false, borderColor: "#ddd", minBarSpacing: 0.05 },
      crosshair: { mode: 0 },
      // A fixed locale: the default (navigator.language) can be a tag Intl refuses, e.g. "en-US@posix".
      localization: { locale: "en-US" }
    })
    return { chart: chart, legend: legend }
  }

  // legend items: [{ label, colour, value(time|null) -> string }]; null time = the last values.
  var bindLegend = function (c, items, header) {
    var render = function (time) {
      c.legend.textContent = ""
      var h = el("span", "when", header(time))
      c.legend.appendChild(h)
      items.forEach(function (it) {
        var s = el("span", "item")
        var sw = el("i")
        sw.style.background = it.colour
        s.appendChild(sw)
        s.appendChild(document.createTextNode(it.label + " "))
        s.appendChild(el("b", "", it.value(time)))
        c.legend.appendChild(s)
      })
    }
    c.chart.subscribeCrosshairMove(function (p) { render(p.time === undefined ? null : p.time) })
    render(null)
  }

  // Value of column ys at time t (t in ts), or at the end when t is null.
  var lookup = function (ts) {
    var index = new Map()
    ts.forEach(function (t, i) { index.set(t, i) })
    return function (ys, t) {
      var i = t === null ? ts.length - 1 : index.get(t)
      return i === undefined || i < 0 ? null : ys[i]
    }
  }
  var line = function (ts, ys, f) {
    var out = []
    for (var i = 0; i < ts.length; i++) out.push(ys[i] === null || ys[i] === undefined ? { time: ts[i] } : { time: ts[i], value: f(ys[i]) })
    return out
  }
  // A stepped line that stops where ys is null: Lightweight Charts joins a line across whitespace
  // points, so a gap is drawn as points in a transparent colour instead. A step segment takes the
  // colour of the point it starts from, so each null point carries the next value (the line
  // reappears exactly where the quote does, with no stale level drawn through the gap).
  var HIDDEN = "rgba(0,0,0,0)"
  var stepLine = function (ts, ys) {
    var out = []
    var next = null
    for (var i = ts.length - 1; i >= 0; i--) {
      if (ys[i] !== null && ys[i] !== undefined) next = ys[i]
      out.push(next)
    }
    out.reverse()
    var last = null
    return ts.map(function (t, i) {
      var y = ys[i]
      if (y !== null && y !== undefined) return { time: t, value: (last = y) }
      var v = out[i] !== null ? out[i] : last
      return v === null ? { time: t } : { time: t, value: v, color: HIDDEN }
    })
  }
  var id = function (x) { return x }
  var when = function (ts) { return function (t) { return utc(t === null ? ts[ts.length - 1] : t) } }

  // Equity, cash and LP rewards credited (rewards on the left scale: much smaller numbers).
  var eq = data.equity
  var at = lookup(eq.t)
  var c1 = box("chart-equity", "Equity, cash and LP rewards (USDC)", "Equity = cash + inventory at mid; rewards (left scale) are credited when each day closes.")
  c1.chart.applyOptions({ leftPriceScale: { visible: true } })
  c1.chart.addSeries(L.LineSeries, { color: COLOURS[0], lineWidth: 2, priceFormat: USDC, title: "equity" }).setData(line(eq.t, eq.equityMicro, usd))
  c1.chart.addSeries(L.LineSeries, { color: COLOURS[2], lineWidth: 1, lineStyle: 2, priceFormat: USDC, title: "cash" }).setData(line(eq.t, eq.cashMicro, usd))
  c1.chart.addSeries(L.LineSeries, { color: "#e0a800", lineWidth: 2, lineType: 1, priceScaleId: "left", priceFormat: USDC, title: "rewards" }).setData(line(eq.t, eq.rewardsMicro, usd))
  bindLegend(c1, [
    { label: "equity", colour: COLOURS[0], value: function (t) { var v = at(eq.equityMicro, t); return v === null ? "-" : fmt2(usd(v)) } },
    { label: "cash", colour: COLOURS[2], value: function (t) { var v = at(eq.cashMicro, t); return v === null ? "-" : fmt2(usd(v)) } },
    { label: "rewards (left axis)", colour: "#e0a800", value: function (t) { var v = at(eq.rewardsMicro, t); return v === null ? "-" : fmt2(usd(v)) } }
  ], when(eq.t))
  c1.chart.timeScale().fitContent()

  // Drawdown from the running peak of the sampled equity.
  var c2 = box("chart-drawdown", "Drawdown (USDC)", "Sampled equity minus its running peak; the per-event maximum in the summary is " + fmt2(usd(data.maxDrawdownMicro)) + " USDC.")
  // Filled between the line and zero (a baseline at 0), the deeper the redder.
  c2.chart.addSeries(L.BaselineSeries, {
    baseValue: { type: "price", price: 0 }, lineWidth: 1, priceFormat: USDC, title: "drawdown",
    topLineColor: "#c0392b", topFillColor1: "rgba(0,0,0,0)", topFillColor2: "rgba(0,0,0,0)",
    bottomLineColor: "#c0392b", bottomFillColor1: "rgba(192,57,43,0.1)", bottomFillColor2: "rgba(192,57,43,0.4)"
  })
    .setData(line(eq.t, eq.drawdownMicro, usd))
  bindLegend(c2, [
    { label: "drawdown", colour: "#c0392b", value: function (t) { var v = at(eq.drawdownMicro, t); var p = at(eq.drawdownPct, t); return v === null ? "-" : fmt2(usd(v)) + " (" + p.toFixed(2) + "%)" } }
  ], when(eq.t))
  c2.chart.timeScale().fitContent()

  // Inventory per market.
  var inv = data.inventory
  var atInv = lookup(inv.t)
  var c3 = box("chart-inventory", "Inventory: net YES contracts per market")
  inv.markets.forEach(function (m, k) {
    c3.chart.addSeries(L.LineSeries, { color: COLOURS[k % COLOURS.length], lineWidth: 1, lineType: 1, priceFormat: WHOLE, title: m }).setData(line(inv.t, inv.netYes[k], id))
  })
  bindLegend(c3, inv.markets.map(function (m, k) {
    return { label: m, colour: COLOURS[k % COLOURS.length], value: function (t) { var v = atInv(inv.netYes[k], t); return v === null ? "-" : fmt0(v) } }
  }), when(inv.t))
  c3.chart.timeScale().fitContent()

  // Quotes against the mid, per market: fills as arrows at their YES price (up: bought YES or
  // sold NO; down: sold YES or bought NO), paused spans shaded amber, a stop shaded red.
  data.quotes.forEach(function (q, k) {
    var atQ = lookup(q.t)
    var note = "Our best bid and ask against the book's mid, YES bps. Arrows: our fills (" + q.fills.reduce(function (s, f) { return s + f.n }, 0) + "). Amber: paused (" +
      fmt0(q.pausedShownSec) + " s). Red: stopped."
    var c = box("chart-quotes-" + k, "Quotes vs mid: " + q.market, note)
    var inSpan = function (t) {
      for (var i = 0; i < q.spans.length; i++) if (t >= q.spans[i].fromSec && t <= q.spans[i].toSec) return q.spans[i]
      return null
    }
    if (q.spans.length > 0) {
      var shade = c.chart.addSeries(L.HistogramSeries, { priceScaleId: "spans", priceLineVisible: false, lastValueVisible: false, base: 0 })
      c.chart.priceScale("spans").applyOptions({ scaleMargins: { top: 0, bottom: 0 }, visible: false })
      shade.setData(q.t.map(function (t) {
        var s = inSpan(t)
        return s === null ? { time: t } : { time: t, value: 1, color: s.kind === "stopped" ? "rgba(214,39,40,0.13)" : "rgba(224,168,0,0.18)" }
      }))
    }
    // Small margins: the default top margin labels the axis far past the highest price (10,000 bps).
    c.chart.priceScale("right").applyOptions({ scaleMargins: { top: 0.06, bottom: 0.04 } })
    var mid = c.chart.addSeries(L.LineSeries, { color: "#555", lineWidth: 1, priceFormat: WHOLE, title: "mid" })
    mid.setData(line(q.t, q.mid, id))
    // No last-value label on our quotes: after a stop it would show a price no longer quoted.
    var quiet = { lineWidth: 1, lineType: 1, priceFormat: WHOLE, lastValueVisible: false, priceLineVisible: false, crosshairMarkerVisible: false }
    var bid = c.chart.addSeries(L.LineSeries, Object.assign({ color: COLOURS[2] }, quiet))
    bid.setData(stepLine(q.t, q.bid))
    var ask = c.chart.addSeries(L.LineSeries, Object.assign({ color: COLOURS[1] }, quiet))
    ask.setData(stepLine(q.t, q.ask))
    charts["chart-quotes-" + k] = { chart: c.chart, mid: mid, bid: bid, ask: ask }
    var markers = q.fills.map(function (f) {
      return { time: f.t, position: "atPriceMiddle", price: f.yesPriceBps, shape: f.yesSide === "buy" ? "arrowUp" : "arrowDown", color: f.yesSide === "buy" ? "#1a7f37" : "#b42318", size: 0.6 }
    })
    // A square where each span starts (so a pause shorter than a bar is still seen); only the stop is labelled.
    q.spans.forEach(function (s) {
      markers.push(s.kind === "stopped"
        ? { time: s.fromSec, position: "aboveBar", shape: "square", color: "#d62728", text: s.label, size: 0.6 }
        : { time: s.fromSec, position: "aboveBar", shape: "square", color: "#e0a800", size: 0.4 })
    })
    markers.sort(function (a, b) { return a.time - b.time })
    L.createSeriesMarkers(mid, markers)
    var fillsAt = new Map()
    q.fills.forEach(function (f) { var a = fillsAt.get(f.t) || []; a.push(f); fillsAt.set(f.t, a) })
    var v0 = function (ys) { return function (t) { var v = atQ(ys, t); return v === null ? "-" : fmt0(v) } }
    bindLegend(c, [
      { label: "mid", colour: "#555", value: v0(q.mid) },
      { label: "bid", colour: COLOURS[2], value: v0(q.bid) },
      { label: "ask", colour: COLOURS[1], value: v0(q.ask) },
      { label: "fills", colour: "#1a7f37", value: function (t) {
        var fs = t === null ? null : fillsAt.get(t)
        if (!fs) return "-"
        return fs.map(function (f) { return (f.yesSide === "buy" ? "buy " : "sell ") + f.contracts + " YES @ " + f.yesPriceBps + (f.n > 1 ? " (" + f.n + " fills)" : "") }).join(", ")
      } },
      { label: "state", colour: "#e0a800", value: function (t) { var s = inSpan(t === null ? q.t[q.t.length - 1] : t); return s === null ? "quoting" : s.label } }
    ], when(q.t))
    c.chart.timeScale().fitContent()
  })

  // Daily PnL split: per day three bars (trading, rebates, rewards) and an empty slot between days.
  var days = data.daily
  var c5 = box("chart-daily", "Daily PnL: trading, maker rebates, LP rewards (USDC)", "A day is UTC midnight to midnight; its PnL is the change of equity, of which rebates and the day's rewards are shown apart.")
  var parts = [["trading", "tradingMicro", COLOURS[0]], ["rebates", "rebatesMicro", COLOURS[2]], ["rewards", "rewardsMicro", "#e0a800"]]
  var byTime = new Map()
  parts.forEach(function (p, j) {
    var s = c5.chart.addSeries(L.HistogramSeries, { color: p[2], priceFormat: USDC, priceLineVisible: false, lastValueVisible: false })
    var pts = []
    days.forEach(function (d) {
      var t = d.day * 86400 + j * 21600
      byTime.set(t, d)
      pts.push({ time: t, value: usd(d[p[1]]) })
      if (j === 0) byTime.set(d.day * 86400 + 3 * 21600, d)
    })
    if (j === 0) days.forEach(function (d) { pts.push({ time: d.day * 86400 + 3 * 21600 }) })
    pts.sort(function (a, b) { return a.time - b.time })
    s.setData(pts)
  })
  var dayAt = function (t) { return t === null ? days[days.length - 1] : byTime.get(t) }
  bindLegend(c5, parts.map(function (p) {
    return { label: p[0], colour: p[2], value: function (t) { var d = dayAt(t); return d ? fmt2(usd(d[p[1]])) : "-" } }
  }).concat([{ label: "total", colour: "#222", value: function (t) { var d = dayAt(t); return d ? fmt2(usd(d.totalMicro)) : "-" } }]),
  function (t) { var d = dayAt(t); return d ? d.label : "" })
  // One date under each day's group (its first bar), nothing under the others.
  c5.chart.applyOptions({ timeScale: { timeVisible: false, tickMarkFormatter: function (t) { var d = byTime.get(t); return d && t === d.day * 86400 ? d.label : "" } } })
  c5.chart.timeScale().fitContent()
  document.body.setAttribute("data-charts", "ready")
})()
