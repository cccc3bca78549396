"""What bloatlab shows and writes about results: figures (:mod:`.plot`), the HTML report of
a sweep or run (:mod:`.report`), Markdown pages as HTML (:mod:`.markdown`: the reports of
``reproduce`` and ``fixes``), console tables of a run summary (:mod:`.tables`) and the number
formatting they share (:mod:`.numbers`)."""
