// The sweep index's run table: click a header to sort by that column (again to reverse).
// Cells carry their raw values in data-v, so money and percentages sort as numbers.
;(function () {
  "use strict"
  var table = document.getElementById("runs")
  var heads = table.querySelectorAll("thead th")
  var body = table.tBodies[0]
  heads.forEach(function (th, col) {
    if (!th.querySelector("button")) return
    th.addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending"
      heads.forEach(function (h) { h.removeAttribute("aria-sort") })
      th.setAttribute("aria-sort", dir)
      var num = th.getAttribute("data-type") === "num"
      var rows = Array.prototype.slice.call(body.rows)
      var key = function (tr) { var v = tr.cells[col].getAttribute("data-v"); return num ? Number(v) : v }
      rows.sort(function (a, b) {
        var x = key(a)
        var y = key(b)
        var c = x < y ? -1 : x > y ? 1 : 0
        return dir === "ascending" ? c : -c
      })
      rows.forEach(function (tr) { body.appendChild(tr) })
    })
  })
})()
