/// The report's inline CSS and scripts (no external files: the report must open offline and pass
/// its own Content-Security-Policy).
enum HTMLAssets {
    /// Runs first: any script error is recorded on <html data-errors>, which tests read from the DOM.
    static let errorRecorder = """
    window.addEventListener('error',function(e){var h=document.documentElement;h.setAttribute('data-errors',(h.getAttribute('data-errors')||'')+(e.message||'error')+';');});
    """

    /// Zoom and pan of the timeline: elements carry their base x in data-x (and data-x2 for spans);
    /// the view maps base plot x p to L + (p − o)·k.
    static let zoomScript = """
    (function(){
    var svg=document.getElementById('timeline');if(!svg){document.documentElement.setAttribute('data-ready','1');return;}
    var L=+svg.getAttribute('data-left'),P=+svg.getAttribute('data-plot'),k=1,o=0,drag=null;
    var ts=svg.querySelectorAll('.t'),ss=svg.querySelectorAll('rect.s'),lv=document.getElementById('zoomlevel');
    function X(x){return L+(x-L-o)*k;}
    function draw(){var i,e,a,b;
    for(i=0;i<ts.length;i++){e=ts[i];e.setAttribute('transform','translate('+X(+e.getAttribute('data-x')).toFixed(1)+','+e.getAttribute('data-y')+')');}
    for(i=0;i<ss.length;i++){e=ss[i];a=X(+e.getAttribute('data-x'));b=X(+e.getAttribute('data-x2'));
    e.setAttribute('x',a.toFixed(1));e.setAttribute('width',Math.max(b-a,+(e.getAttribute('data-min')||0)).toFixed(1));}
    if(lv)lv.textContent=k>1?'×'+k.toFixed(1):'';}
    function sx(cx){var p=svg.createSVGPoint();p.x=cx;p.y=0;return p.matrixTransform(svg.getScreenCTM().inverse()).x;}
    function clamp(){o=Math.max(0,Math.min(o,P-P/k));}
    function zoomAt(x,f){var p=(x-L)/k+o;k=Math.max(1,Math.min(k*f,5000));o=p-(x-L)/k;clamp();draw();}
    svg.addEventListener('wheel',function(e){if(!(e.ctrlKey||e.metaKey))return;e.preventDefault();zoomAt(sx(e.clientX),e.deltaY<0?1.25:0.8);},{passive:false});
    svg.addEventListener('dblclick',function(e){e.preventDefault();zoomAt(sx(e.clientX),e.shiftKey?0.5:2);});
    svg.addEventListener('mousedown',function(e){if(e.button===0){drag={x:sx(e.clientX),o:o};}});
    window.addEventListener('mousemove',function(e){if(drag){o=drag.o-(sx(e.clientX)-drag.x)/k;clamp();draw();}});
    window.addEventListener('mouseup',function(){drag=null;});
    function btn(id,f){var b=document.getElementById(id);if(b)b.addEventListener('click',f);}
    btn('zoom-in',function(){zoomAt(L+P/2,2);});btn('zoom-out',function(){zoomAt(L+P/2,0.5);});
    btn('zoom-fit',function(){k=1;o=0;draw();});
    document.addEventListener('keydown',function(e){if(e.key==='Escape'){k=1;o=0;draw();}});
    draw();document.documentElement.setAttribute('data-ready','1');
    })();
    """

    /// The findings table: fold/unfold a rule, filter by text and severity, and unfold the rule of
    /// a finding a link points to (#finding-N from the timeline or the header).
    static let findingsScript = """
    (function(){
    var box=document.getElementById('finding-filter');if(!box)return;
    var table=document.querySelector('table.findings'),sw=document.querySelectorAll('.sev-switch'),groups=document.querySelectorAll('tbody.rule-group'),count=document.getElementById('filter-count');
    function apply(){var q=box.value.toLowerCase().trim(),on={},i,j,shown=0,total=0;
    for(i=0;i<sw.length;i++)on[sw[i].value]=sw[i].checked;
    table.classList.toggle('filtering',q.length>0);
    for(i=0;i<groups.length;i++){var g=groups[i],rows=g.querySelectorAll('tr.finding'),head=g.querySelector('tr.rule-head').textContent.toLowerCase(),n=0;
    for(j=0;j<rows.length;j++){var r=rows[j],ok=on[r.getAttribute('data-severity')]&&(!q||(head+' '+r.textContent.toLowerCase()).indexOf(q)>=0);
    r.classList.toggle('filtered',!ok);if(ok)n++;}
    total+=rows.length;shown+=n;g.classList.toggle('empty',n===0);
    var m=g.querySelector('.matches');if(m)m.textContent=n<rows.length&&n>0?n+' of '+rows.length+' shown':'';}
    count.textContent=shown<total?shown+' of '+total+' findings shown':'';}
    function fold(g,f){g.classList.toggle('folded',f);var b=g.querySelector('.fold-toggle');if(b)b.setAttribute('aria-expanded',f?'false':'true');}
    for(var i=0;i<groups.length;i++){(function(g){var b=g.querySelector('.fold-toggle');if(b)b.addEventListener('click',function(){fold(g,!g.classList.contains('folded'));});})(groups[i]);}
    box.addEventListener('input',apply);for(i=0;i<sw.length;i++)sw[i].addEventListener('change',apply);
    function reveal(){var id=location.hash.slice(1),t=id&&document.getElementById(id);
    if(t&&t.classList.contains('finding')){fold(t.parentNode,false);t.classList.remove('filtered');t.parentNode.classList.remove('empty');t.scrollIntoView();}}
    window.addEventListener('hashchange',reveal);reveal();
    })();
    """

    static let timelineLegend = """
    <p class="legend"><i class="sw bar"></i>connection <i class="sw traffic"></i>ACL traffic <i class="sw credits"></i>controller buffers held
    <i class="sw full"></i>all buffers in use <i class="sw connecting"></i>connecting <i class="sw scanning"></i>scanning
    <i class="sw advertising"></i>advertising <i class="sw failed"></i>failed attempt <i class="dot m-mtu"></i>MTU
    <i class="dot m-discovery"></i>discovery <i class="dot m-ok"></i>subscribed / encrypted <i class="dot m-bad"></i>failure
    <i class="dot m-end"></i>disconnect <i class="sw band-error"></i>error <i class="sw band-warning"></i>warning</p>
    """

    static let css = """
    :root{--err:#cf222e;--warn:#b35900;--info:#0969da;--ok:#1a7f37;--ink:#1f2328;--mute:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
    *{box-sizing:border-box}
    body{margin:0 auto;max-width:1400px;padding:14px 22px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:#fff}
    h1{font-size:22px;margin:0 0 6px;word-break:break-all}h2{font-size:18px;margin:26px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
    h3{font-size:15px;margin:18px 0 6px}h4{font-size:13px;margin:12px 0 4px}
    a{color:var(--info);text-decoration:none}a:hover{text-decoration:underline}
    code,pre{font:12px/1.4 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
    header{border-bottom:1px solid var(--line);padding-bottom:8px}
    .verdict{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin:4px 0 8px}
    .count{display:inline-block;padding:3px 10px;border-radius:14px;font-size:14px;color:#fff}
    .count b{font-size:16px}.count-error{background:var(--err)}.count-warning{background:var(--warn)}.count-info{background:var(--info)}
    .count.zero{background:#e6eaef;color:var(--mute)}
    .headline{font-size:17px;font-weight:600;margin-left:6px}.headline a{margin-right:2px}.headline.ok{color:var(--ok)}
    a.sev-error{color:var(--err)}a.sev-warning{color:var(--warn)}a.sev-info{color:var(--info)}
    .summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:2px 18px;margin:0}
    .summary div{display:flex;gap:8px}.summary dt{font-weight:600;min-width:92px;color:var(--mute)}.summary dd{margin:0}
    .toolbar{display:flex;gap:6px;align-items:center;margin:2px 0 4px}.toolbar button{font-size:14px;min-width:30px;padding:1px 8px;border:1px solid var(--line);background:var(--bg);border-radius:5px;cursor:pointer}
    #zoomlevel{font-weight:600;min-width:40px}.hint{color:var(--mute);font-size:12px}
    .timeline-wrap{border:1px solid var(--line);border-radius:6px;overflow:hidden}
    svg{display:block;width:100%;height:auto;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
    svg.timeline{cursor:grab;user-select:none}
    .lane-radio{fill:#f3f6fa}.lane-even{fill:#fff}.lane-odd{fill:#fafbfc}.lane{stroke:#e6eaef;stroke-width:1}
    .divider{stroke:var(--line)}.grid{stroke:#e9edf1;stroke-width:1}
    .tick{font-size:11px;fill:var(--mute)}.lanetitle{font-size:13px;font-weight:600;fill:var(--ink)}.lanesub{font-size:11px;fill:var(--mute)}
    .fold{fill:#fff;fill-opacity:.72;stroke:#b9c3cd;stroke-dasharray:3 3}.foldlabel{font-size:10px;fill:var(--mute)}
    .bar{fill:#d3e4f5;stroke:#7da7d0;stroke-width:1}.bar.open{stroke-dasharray:4 2}.traffic{fill:#2f6db0}
    .connecting{fill:url(#hatch)}.credits{fill:#f0a04b}.credits-full{fill:var(--err)}
    .scanning{fill:#bfe0ef}.advertising{fill:#d9c8f0}.advtick{stroke:#3b8db5;stroke-width:1}.radiolabel{font-size:10px;fill:#355}
    .attempt-ok{fill:#c8d5e2}.attempt-failed,.attempt-pending{fill:#f6c4c4;stroke:var(--err)}.attempt-cancelled{fill:#dde3e8}.attempt-superseded{fill:#f5dcb8}
    .xmark{stroke:var(--err);stroke-width:2;fill:none}.faillabel{font-size:11px;font-weight:600;fill:var(--err)}
    .mark{stroke:#fff;stroke-width:1.5}.m-mtu{fill:#8250df}.m-discovery{fill:#0969da}.m-ok{fill:var(--ok)}.m-bad{fill:var(--err)}
    .m-end{fill:#57606a}.m-data{fill:#2da44e}.m-minor{fill:#9aa5b1}
    .marklabel{font-size:11px;fill:#444}.bang{fill:#fff;pointer-events:none}.barlabel{font-size:11px;fill:#24476b;pointer-events:none}text.m-bad{fill:var(--err);font-weight:600}text.m-mtu{fill:#8250df}text.m-discovery{fill:#0969da}text.m-ok{fill:var(--ok)}
    .band{stroke-width:1}.band-error{fill:var(--err);fill-opacity:.14;stroke:var(--err)}.band-warning{fill:#e08a00;fill-opacity:.16;stroke:#d08000}
    .flag{stroke-width:1.5}.flag-error{fill:var(--err);stroke:var(--err)}.flag-warning{fill:#d08000;stroke:#d08000}.flag-info{fill:var(--info)}
    .flaglabel{font-size:12px;font-weight:700}text.flaglabel{stroke:none}text.flag-error{fill:var(--err)}text.flag-warning{fill:var(--warn)}
    .panel{fill:#fbfcfd;stroke:#e1e6eb}.capacity{stroke:var(--err);stroke-dasharray:5 3}.caplabel{font-size:10px;fill:var(--mute)}
    .credits-area{fill:#f0a04b;fill-opacity:.85}.pool-line{fill:none;stroke:#6e7781;stroke-dasharray:2 2}
    .rate-tx,.rate-rx,.rate-values,.rate-writes{fill:none;stroke-width:1.5}.rate-tx{stroke:#0969da}.rate-rx{stroke:#1b9aaa}.rate-values{stroke:#2da44e}.rate-writes{stroke:#bc4c00}
    .app-tx,.app-rx{fill:none;stroke-width:1.5}.app-tx{stroke:#0969da}.app-rx{stroke:#1b9aaa}.ceiling{stroke-width:1;stroke-dasharray:6 3}
    .ceiling-tx{stroke:#0969da}.ceiling-rx{stroke:#1b9aaa}.linkmark{stroke:#8c959f;stroke-dasharray:1 2}.linklabel{font-size:10px;fill:#57606a}
    .legend{font-size:12px;color:var(--mute);margin:4px 0 0}.legend i{display:inline-block;width:14px;height:10px;margin:0 4px 0 10px;vertical-align:-1px;border-radius:2px}
    .legend i.dot{width:10px;border-radius:5px}
    .sw.bar{background:#d3e4f5;border:1px solid #7da7d0}.sw.traffic{background:#2f6db0}.sw.credits{background:#f0a04b}.sw.full{background:var(--err)}
    .sw.connecting{background:repeating-linear-gradient(45deg,#eef2f6 0 3px,#9aa7b4 3px 5px)}.sw.scanning{background:#bfe0ef}.sw.advertising{background:#d9c8f0}
    .sw.failed{background:#f6c4c4;border:1px solid var(--err)}.sw.cap{height:0!important;border-top:2px dashed var(--err)}
    .sw.tx{background:#0969da}.sw.rx{background:#1b9aaa}.sw.values{background:#2da44e}.sw.writes{background:#bc4c00}.sw.ceil{height:0!important;border-top:2px dashed #0969da}
    .sw.band-error{background:rgba(207,34,46,.2);border:1px solid var(--err)}.sw.band-warning{background:rgba(224,138,0,.2);border:1px solid #d08000}
    i.dot.m-mtu{background:#8250df}i.dot.m-discovery{background:#0969da}i.dot.m-ok{background:var(--ok)}i.dot.m-bad{background:var(--err)}i.dot.m-end{background:#57606a}
    table{border-collapse:collapse;width:100%;margin:4px 0}th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #eaeef2}
    th{background:var(--bg);font-weight:600;font-size:13px}
    .filter{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:4px 0}.filter input[type=search]{width:320px;padding:3px 8px;border:1px solid var(--line);border-radius:5px;font:inherit}
    .filter label{font-size:13px;color:var(--mute)}
    tr.rule-head td{background:var(--bg);border-top:2px solid var(--line)}.fold-toggle{border:0;background:none;padding:0;font:inherit;cursor:pointer;color:var(--ink)}
    .fold-toggle code{font-size:12px;color:var(--mute);margin-left:4px}.chevron::before{content:"▾";display:inline-block;width:14px;color:var(--mute)}
    tbody.folded .chevron::before{content:"▸"}tr.rule-head details{display:inline-block;margin-left:10px}
    tbody.folded tr.finding,tr.finding.filtered,tbody.empty{display:none}table.filtering tbody.folded tr.finding:not(.filtered){display:table-row}
    table.findings tr.sev-error td:first-child{border-left:4px solid var(--err)}table.findings tr.sev-warning td:first-child{border-left:4px solid #d08000}
    table.findings tr.sev-info td:first-child{border-left:4px solid var(--info)}tr:target{background:#fff8c5}
    .badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
    .badge-error{background:var(--err)}.badge-warning{background:var(--warn)}.badge-info{background:var(--info)}
    a.badge{color:#fff}.ruletitle{font-size:12px;color:var(--mute)}.when{white-space:nowrap}.clock{font-size:11px;color:var(--mute)}
    .message{font-weight:500}.why{margin:3px 0;font-size:13px;max-width:900px}.why b{color:var(--err)}details summary{cursor:pointer;color:var(--ok);font-size:13px}details p{margin:4px 0;max-width:900px}
    td.frames a,td.frames span{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;margin-right:4px}
    figure.bytes{margin:6px 0}figure.bytes svg{width:auto;max-width:100%}figcaption{font-size:12px;color:var(--mute)}
    .byte{fill:#dbeafe;stroke:#7da7d0}.byte-over{fill:#f6c4c4;stroke:var(--err)}.byte-missing{fill:url(#none);fill:#fff;stroke:#b9c3cd;stroke-dasharray:3 2}
    .bytechar{font:12px ui-monospace,"DejaVu Sans Mono",monospace;fill:var(--ink)}.bytehex{font:8px ui-monospace,"DejaVu Sans Mono",monospace;fill:var(--mute)}
    .bytemissing{font-size:12px;fill:#b9c3cd}.mtu-limit{stroke:var(--err);stroke-width:2.5}
    .facts span{display:inline-block;background:var(--bg);border:1px solid #e6eaef;border-radius:4px;padding:0 6px;margin:0 2px 2px 0;font-size:12.5px}
    section.connection{border-top:1px dashed var(--line);margin-top:10px}
    table.events{width:auto}table.events td{padding:1px 8px;border:0;font-size:13px}table.events td.frame{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px}
    table.events tr.m-bad td{color:var(--err)}
    pre.frame{margin:0;padding:3px 8px;border-left:3px solid transparent;white-space:pre;overflow-x:auto}pre.frame.evidence{border-left-color:var(--err);background:#fff5f5}
    pre.frame:target{background:#fff8c5}.cite{float:right;font-weight:600;color:var(--err)}.run{border:1px solid #eaeef2;border-radius:6px;margin:8px 0;padding:2px 0 6px}
    .run h4{margin:4px 8px}.cites .badge{margin-left:4px}
    table.kv th{width:160px}table.gatt tr.svc td{background:#f6f8fa;font-weight:600}table.gatt tr.dsc td:nth-child(2){padding-left:22px}
    .none{color:var(--mute)}footer{margin-top:30px;color:var(--mute);font-size:12px;border-top:1px solid var(--line);padding-top:6px}
    """
}
