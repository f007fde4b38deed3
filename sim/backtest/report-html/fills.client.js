// The report page's fills table, run in the browser: reads #fills-data (report-html/fills.ts),
// sorts by a clicked header (again to reverse; empty markouts last either way) and shows the
// sorted rows a page at a time. Times in UTC (window.TwinbookReport.utcSec, from report.client.js).
;(function () {
  "use strict"
  var data = JSON.parse(document.getElementById("fills-data").textContent)
  var root = document.getElementById("fills")
  var utcSec = window.TwinbookReport.utcSec
  var PAGE = 100
  var shown = PAGE
  var fmt2 = function (x) { return x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) }
  var mk = function (x) { return x === null ? "n/a" : x.toFixed(1) }
  // [header, row -> sort key, row -> text]
  var cols = [
    ["time (UTC)", function (r) { return r[0] }, function (r) { return utcSec(Math.floor(r[0] / 1000)) }],
    ["market", function (r) { return data.markets[r[1]] }, function (r) { return data.markets[r[1]] }],
    ["side", function (r) { return r[2] + " " + r[3] }, function (r) { return r[2] + " " + r[3].toUpperCase() }],
    ["price (bps)", function (r) { return r[4] }, function (r) { return String(r[4]) }],
    ["contracts", function (r) { return r[5] }, function (r) { return r[5].toLocaleString("en-US") }],
    ["cause", function (r) { return r[6] }, function (r) { return r[6] }],
    ["rebate (USDC)", function (r) { return r[7] }, function (r) { return fmt2(r[7] / 1e6) }]
  ]
  data.horizonsSec.forEach(function (h, k) {
    cols.push(["markout " + h + " s (bps)", function (r) { return r[8 + k] }, function (r) { return mk(r[8 + k]) }])
  })
  var order = data.rows.slice()
  var sortCol = 0
  var dir = "ascending"

  var note = document.createElement("p")
  note.className = "muted small"
  var table = document.createElement("table")
  table.id = "fills-table"
  var head = table.createTHead().insertRow()
  var body = table.createTBody()
  var more = document.createElement("button")
  more.type = "button"

  var render = function () {
    body.textContent = ""
    var n = Math.min(shown, order.length)
    for (var i = 0; i < n; i++) {
      var tr = body.insertRow()
      for (var c = 0; c < cols.length; c++) tr.insertCell().textContent = cols[c][2](order[i])
    }
    note.textContent = "Showing " + n.toLocaleString("en-US") + " of " + order.length.toLocaleString("en-US") + " fills" +
      (data.total > data.rows.length ? " (the first " + data.rows.length.toLocaleString("en-US") + " of the run's " + data.total.toLocaleString("en-US") + " by time; all are in backtest.duckdb, table fills)" : "") +
      ", sorted by " + cols[sortCol][0] + " " + dir + ". Click a header to sort."
    more.hidden = n >= order.length
    more.textContent = "Show " + Math.min(PAGE, order.length - n) + " more"
  }
  var sortBy = function (c) {
    dir = c === sortCol && dir === "ascending" ? "descending" : "ascending"
    sortCol = c
    var key = cols[c][1]
    order.sort(function (a, b) {
      var x = key(a)
      var y = key(b)
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1
      var d = x < y ? -1 : x > y ? 1 : 0
      return dir === "ascending" ? d : -d
    })
    for (var i = 0; i < head.cells.length; i++) head.cells[i].removeAttribute("aria-sort")
    head.cells[c].setAttribute("aria-sort", dir)
    shown = PAGE
    render()
  }
  cols.forEach(function (col, c) {
    var th = document.createElement("th")
    var b = document.createElement("button")
    b.type = "button"
    b.className = "sort"
    b.textContent = col[0]
    b.addEventListener("click", function () { sortBy(c) })
    th.appendChild(b)
    head.appendChild(th)
  })
  head.cells[0].setAttribute("aria-sort", "ascending")
  more.addEventListener("click", function () { shown += PAGE; render() })
  root.appendChild(note)
  var wrap = document.createElement("div")
  wrap.className = "scroll"
  wrap.appendChild(table)
  root.appendChild(wrap)
  root.appendChild(more)
  render()
  document.body.setAttribute("data-fills", "ready")
})()
