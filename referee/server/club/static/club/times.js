// Moments the server sends in UTC (<time class="local" datetime="...Z">, the |local_time
// filter) shown in the reader's own time zone, as "2026-03-14 09:26". A static file, not an
// inline script: the pages' Content-Security-Policy allows only the club's own scripts.
"use strict";

function twoDigits(n) {
  return String(n).padStart(2, "0");
}

function showLocalTimes(root) {
  root.querySelectorAll("time.local").forEach((element) => {
    const moment = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(moment.getTime())) return;
    element.title = element.getAttribute("datetime");
    element.textContent = moment.getFullYear() + "-" + twoDigits(moment.getMonth() + 1) + "-" +
      twoDigits(moment.getDate()) + " " + twoDigits(moment.getHours()) + ":" +
      twoDigits(moment.getMinutes());
  });
}

// A chart's time labels (SVG <text class="local" data-datetime="...Z">, shared/ratinghistory.py),
// shorter: "03-14 09:26", the year said by the line under the chart.
function showLocalLabels(root) {
  root.querySelectorAll("text.local[data-datetime]").forEach((element) => {
    const moment = new Date(element.dataset.datetime);
    if (Number.isNaN(moment.getTime())) return;
    element.textContent = twoDigits(moment.getMonth() + 1) + "-" + twoDigits(moment.getDate()) +
      " " + twoDigits(moment.getHours()) + ":" + twoDigits(moment.getMinutes());
  });
}

document.addEventListener("DOMContentLoaded", () => {
  showLocalTimes(document);
  showLocalLabels(document);
});
